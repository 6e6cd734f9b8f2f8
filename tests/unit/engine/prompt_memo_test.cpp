// The memos on a prompt's way to its tokens (token_memo, render_memo), against llama.cpp's own
// tokenizer and template application on a real tiny model's vocabulary and template: whatever
// the memos reuse, the result is the one computed from scratch.
#include <gtest/gtest.h>

#include <chat.h>
#include <common.h>
#include <llama.h>

#include <filesystem>
#include <random>

#include "engine/llama/message_boundaries.h"
#include "engine/llama/render_memo.h"
#include "engine/llama/token_memo.h"
#include "tiny_engine.h"

namespace {

class PromptMemoTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        std::string err;
        const auto o = sf::test::tiny_engine_options("memo-test", 3, dir_, err);
        ASSERT_EQ(err, "");
        engine_ = new sf::llama_engine(o);
    }
    static void TearDownTestSuite() {
        delete engine_;
        std::filesystem::remove_all(dir_);
    }
    static const llama_vocab *vocab() { return llama_model_get_vocab(engine_->model()); }
    static inline sf::llama_engine *engine_ = nullptr;
    static inline std::filesystem::path dir_;
};

// Texts built as prompts are: each keeps a random prefix of an earlier one and goes on with
// words, multi-byte characters, whitespace and the vocabulary's special tokens.
TEST_F(PromptMemoTest, TokensEqualAWholeTokenizationWhateverPrefixIsReused) {
    const std::vector<std::string> pieces = {"alpha ",
                                             "beta",
                                             " gamma\n",
                                             "  ",
                                             "\n\n",
                                             "é",
                                             "日本語",
                                             "🙂",
                                             "don't ",
                                             "123 ",
                                             "<|im_start|>",
                                             "<|im_end|>",
                                             "<think>",
                                             "</think>",
                                             "<tool_call>",
                                             "</tool_call>",
                                             "user\n",
                                             "assistant\n",
                                             "{\"a\": 1}",
                                             "<|im_",
                                             "end|>",
                                             "<",
                                             ">",
                                             "\t"};
    std::mt19937 rng(42);
    sf::token_memo memo(vocab());
    std::vector<std::string> texts;
    for (int i = 0; i < 300; ++i) {
        std::string t;
        if (!texts.empty() && rng() % 4 != 0) {
            const auto &base = texts[rng() % texts.size()];
            t                = base.substr(0, rng() % (base.size() + 1));
        }
        while (t.size() < 1200 || rng() % 8 != 0) t += pieces[rng() % pieces.size()];
        const bool bos = rng() % 2 == 0;
        SCOPED_TRACE(i);
        ASSERT_EQ(memo.tokenize(t, bos), common_tokenize(vocab(), t, bos, true));
        texts.push_back(std::move(t));
    }
    EXPECT_GT(memo.reused_tokens(), 1000u);  // the memo was used, not bypassed
}

// llama.cpp's template application, counting its calls in `applied`.
sf::template_apply counting_apply(int &applied) {
    return [&applied](const common_chat_templates *t, const common_chat_templates_inputs &in) {
        ++applied;
        return common_chat_templates_apply(t, in);
    };
}

common_chat_msg message(const std::string &role, const std::string &content) {
    common_chat_msg m;
    m.role    = role;
    m.content = content;
    return m;
}

common_chat_templates_inputs conversation(const std::string &system, const std::string &last) {
    common_chat_templates_inputs in;
    in.use_jinja = true;
    in.messages  = {message("system", system), message("user", last)};
    return in;
}

// Asked again with another last user message, the memo answers without applying the
// template, and its rendering is the one the template gives.
TEST_F(PromptMemoTest, RenderingsFromTheMemoEqualTheTemplatesOwn) {
    auto tmpls       = common_chat_templates_init(engine_->model(), "");
    int applied      = 0;
    const auto apply = counting_apply(applied);
    const std::string system(3000, 'x');
    const uint64_t hits0 = sf::memo_render_hits();
    for (int i = 0; i < 6; ++i) {
        const auto in   = conversation(system, "question number " + std::to_string(i));
        const auto got  = sf::memo_render(tmpls.get(), in, apply);
        const auto want = common_chat_templates_apply(tmpls.get(), in);
        EXPECT_EQ(got.prompt, want.prompt);
        EXPECT_EQ(got.generation_prompt, want.generation_prompt);
        EXPECT_EQ(got.parser, want.parser);
    }
    EXPECT_EQ(applied, 2);  // the first request, rendered both ways
    EXPECT_EQ(sf::memo_render_hits() - hits0, 5u);
    // Content a template may look into (tags, "/think", surrounding whitespace): rendered.
    for (std::string last : {"a <b> c", "please /think", " padded ", "x|y"}) {
        applied       = 0;
        const auto in = conversation(system, last);
        EXPECT_EQ(sf::memo_render(tmpls.get(), in, apply).prompt,
                  common_chat_templates_apply(tmpls.get(), in).prompt);
        EXPECT_EQ(applied, 1);
    }
}

// An edited earlier user message meets the memo too (every user message and tool result of
// inert text is marked, not only the last one); the renderings are still the template's own,
// and content a template may look into is rendered in full.
TEST_F(PromptMemoTest, EditedEarlierMessagesAndToolResultsComeFromTheMemo) {
    auto tmpls       = common_chat_templates_init(engine_->model(), "");
    int applied      = 0;
    const auto apply = counting_apply(applied);
    const std::string system(2000, 'y');
    const auto edited = [&](const std::string &second, const std::string &result) {
        common_chat_templates_inputs in;
        in.use_jinja = true;
        in.messages  = {message("system", system),
                        message("user", "first question"),
                        message("assistant", "first answer"),
                        message("user", second),
                        message("assistant", "second answer"),
                        message("user", result)};
        return in;
    };
    const uint64_t hits0 = sf::memo_render_hits();
    for (int i = 0; i < 4; ++i) {
        const auto in = edited("edited message " + std::to_string(i), "last " + std::to_string(i));
        EXPECT_EQ(sf::memo_render(tmpls.get(), in, apply).prompt,
                  common_chat_templates_apply(tmpls.get(), in).prompt);
    }
    EXPECT_EQ(applied, 2);  // the first request, both ways
    EXPECT_EQ(sf::memo_render_hits() - hits0, 3u);
    applied       = 0;
    const auto in = edited("an <b>edited</b> message", "last");
    EXPECT_EQ(sf::memo_render(tmpls.get(), in, apply).prompt,
              common_chat_templates_apply(tmpls.get(), in).prompt);
    EXPECT_GE(applied, 1);  // the tagged message is in the key: rendered, not from the memo
    EXPECT_EQ(sf::memo_render_hits() - hits0, 3u);
}

// The message boundary finder's memo (hybrid models' snapshot points): with an earlier user
// message edited and a new question each time, the boundaries it gives from its memo are the
// ones a fresh finder computes.
TEST_F(PromptMemoTest, MessageBoundariesFromTheMemoEqualFreshOnes) {
    auto tmpls               = common_chat_templates_init(engine_->model(), "");
    const llama_vocab *vocab = llama_model_get_vocab(engine_->model());
    sf::message_boundary_finder warm(tmpls.get(), vocab);
    const sf::chat_options opts;
    for (int i = 0; i < 4; ++i) {
        const std::string n                      = std::to_string(i);
        const std::vector<sf::chat_message> msgs = {
            {"system", "You are brief. " + std::string(1500, 'z'), "", "", "", {}},
            {"user", "first question", "", "", "", {}},
            {"assistant", "first answer", "", "", "", {}},
            {"user", "edited message " + n, "", "", "", {}},
            {"assistant", "second answer", "", "", "", {}},
            {"user", "question " + n, "", "", "", {}}};
        sf::rendered_prompt p;
        std::string err;
        ASSERT_TRUE(engine_->render_chat(msgs, true, opts, p, err)) << err;
        sf::message_boundary_finder cold(tmpls.get(), vocab);
        const auto got = warm.find(msgs, opts, p);
        EXPECT_EQ(got, cold.find(msgs, opts, p)) << i;
        EXPECT_EQ(got.size(), 6u) << i;
    }
    EXPECT_EQ(warm.memo_hits(), 3u * 6u);  // every request after the first, every message
}

// A template that changes the content (here: upper case) never gets its renderings from the
// memo: the first comparison fails, and every request is rendered by the template.
TEST_F(PromptMemoTest, ATemplateThatChangesTheContentIsAlwaysApplied) {
    auto tmpls = common_chat_templates_init(
        engine_->model(),
        "{% for m in messages %}{{ m.role }}: {{ m.content | upper }}\n{% endfor %}");
    int applied      = 0;
    const auto apply = counting_apply(applied);
    for (int i = 0; i < 4; ++i) {
        const auto in  = conversation("Be brief.", "question " + std::to_string(i));
        const auto got = sf::memo_render(tmpls.get(), in, apply);
        EXPECT_NE(got.prompt.find("QUESTION " + std::to_string(i)), std::string::npos);
        EXPECT_EQ(got.prompt, common_chat_templates_apply(tmpls.get(), in).prompt);
    }
    EXPECT_EQ(applied, 2 + 3);  // both ways once, then in full each time
}

}  // namespace
