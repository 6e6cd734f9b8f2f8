// Drives the llama.cpp engine on a real tiny model written by mkmodel.
#include "engine/llama/llama_engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <regex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <llama.h>
#include "chat/output_parser.h"
#include "decode_threads.h"
#include "engine/llama/model_info.h"
#include "engine/text_stream.h"
#include "mkmodel.h"
#include "tiny_engine.h"

namespace {

class LlamaEngineTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        std::string err;
        const auto o = sf::test::tiny_engine_options("engine-test", 7, dir_, err);
        ASSERT_EQ(err, "");
        engine_ = new sf::llama_engine(o);
    }
    static void TearDownTestSuite() {
        delete engine_;
        std::filesystem::remove_all(dir_);
    }
    static inline sf::llama_engine *engine_ = nullptr;
    static inline std::filesystem::path dir_;
};

TEST_F(LlamaEngineTest, RendersTheModelsChatTemplate) {
    sf::rendered_prompt out;
    std::string err;
    ASSERT_TRUE(engine_->render_chat(
        {{"system", "Be brief.", "", "", "", {}}, {"user", "Hi there", "", "", "", {}}}, true, out,
        err))
        << err;
    std::string text;
    for (auto t : out.tokens) text += engine_->token_piece(t);
    // Qwen3's template: ChatML turns and an open assistant turn.
    EXPECT_NE(text.find("<|im_start|>system\nBe brief.<|im_end|>"), std::string::npos) << text;
    EXPECT_NE(text.find("<|im_start|>user\nHi there<|im_end|>"), std::string::npos) << text;
    EXPECT_EQ(text.substr(text.size() - 22), "<|im_start|>assistant\n") << text;
    // Special tokens are single tokens, not spelled out.
    EXPECT_EQ(engine_->tokenize("<|im_start|>", false).size(), 1u);
    EXPECT_TRUE(engine_->is_eog(engine_->tokenize("<|im_end|>", false).at(0)));
}

// The worker renders on gRPC threads, several at once (Submit, Render). llama.cpp's template
// application calls std::localtime (one static struct tm per process): under ThreadSanitizer
// (scripts/sanitize.sh tsan) this test failed until applications took turns (chat_render.cpp).
TEST_F(LlamaEngineTest, RendersFromSeveralThreadsAtOnce) {
    auto render = [] {
        sf::rendered_prompt out;
        std::string err;
        const bool ok =
            engine_->render_chat({{"user", "Hi there", "", "", "", {}}}, true, out, err);
        return ok ? out.tokens : std::vector<sf::token_id>{};
    };
    const std::vector<sf::token_id> want = render();
    ASSERT_FALSE(want.empty());
    std::vector<std::thread> threads;
    std::atomic<int> same{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 5; ++i) same += render() == want;
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(same.load(), 20);
}

TEST_F(LlamaEngineTest, TokenizationRoundTripsMultiByteText) {
    const std::string text = "Repeat exactly: 赋予 🚀 歪 — naïve café";
    auto toks              = engine_->tokenize(text, false);
    ASSERT_GT(toks.size(), 5u);
    std::string joined;
    bool some_piece_is_partial = false;
    sf::text_stream ts;
    std::string streamed;
    for (auto t : toks) {
        std::string piece = engine_->token_piece(t);
        joined += piece;
        std::string released = ts.push(piece);
        // Whatever is released is whole code points.
        for (size_t i = 0; i < released.size(); ++i) {
            unsigned char c = released[i];
            if (i == 0) EXPECT_NE(c & 0xC0, 0x80) << "released text starts inside a code point";
        }
        if (released.size() != piece.size()) some_piece_is_partial = true;
        streamed += released;
    }
    streamed += ts.flush();
    EXPECT_EQ(joined, text);
    EXPECT_EQ(streamed, text);
    // The byte-level BPE splits at least one of these characters across tokens.
    EXPECT_TRUE(some_piece_is_partial);
}

TEST_F(LlamaEngineTest, DecodesTwoSequencesInOneBatchAndGreedyIsDeterministic) {
    sf::sampling_params greedy;
    greedy.temperature = 0;
    auto prompt        = engine_->tokenize("Hello, world", false);
    auto run           = [&](bool batched) {
        engine_->seq_start(0, greedy, prompt);
        if (batched) engine_->seq_start(1, greedy, prompt);
        std::vector<sf::batch_item> items = {{0, prompt, 0, true}};
        if (batched) items.push_back({1, prompt, 0, true});
        EXPECT_EQ(engine_->decode(items), 0);
        std::vector<sf::token_id> out = {engine_->sample(0, 0, 0)};
        if (batched) EXPECT_EQ(engine_->sample(1, 1, 0), out[0]);
        int pos = static_cast<int>(prompt.size());
        for (int i = 0; i < 8; ++i) {
            std::vector<sf::batch_item> step = {{0, {out.back()}, pos, true}};
            EXPECT_EQ(engine_->decode(step), 0);
            out.push_back(engine_->sample(0, 0, static_cast<uint32_t>(i + 1)));
            ++pos;
        }
        engine_->seq_end(0);
        if (batched) engine_->seq_end(1);
        return out;
    };
    auto a = run(false);
    auto b = run(true);
    EXPECT_EQ(a, b);
}

}  // namespace

namespace {

// Decodes and samples `n` tokens on `seq` from `last` at position `pos`; the first one is
// token number `index` of the session.
std::vector<sf::token_id> decode_steps(sf::llama_engine &e, int seq, sf::token_id last, int pos,
                                       uint32_t index, int n) {
    std::vector<sf::token_id> out;
    for (int i = 0; i < n; ++i) {
        std::vector<sf::batch_item> step = {{seq, {last}, pos + i, true}};
        EXPECT_EQ(e.decode(step), 0);
        last = e.sample(seq, 0, index + static_cast<uint32_t>(i));
        out.push_back(last);
    }
    return out;
}

}  // namespace

TEST_F(LlamaEngineTest, ParkedSequenceResumesExactlyInAnotherSlot) {
    sf::sampling_params greedy;
    greedy.temperature = 0;
    auto prompt        = engine_->tokenize("Preemption must not change the answer", false);
    const int n        = static_cast<int>(prompt.size());

    // Reference: 12 greedy tokens without interruption.
    engine_->seq_start(0, greedy, prompt);
    std::vector<sf::batch_item> pre = {{0, prompt, 0, true}};
    ASSERT_EQ(engine_->decode(pre), 0);
    sf::token_id first = engine_->sample(0, 0, 0);
    auto reference     = decode_steps(*engine_, 0, first, n, 1, 12);
    engine_->seq_end(0);

    // Same, parked after 4 tokens and resumed in slot 1 while slot 0 is reused.
    engine_->seq_start(0, greedy, prompt);
    ASSERT_EQ(engine_->decode(pre), 0);
    ASSERT_EQ(engine_->sample(0, 0, 0), first);
    auto head = decode_steps(*engine_, 0, first, n, 1, 4);
    int64_t h = engine_->seq_park(0);
    ASSERT_GE(h, 0);
    EXPECT_GT(engine_->parked_bytes(), 0u);
    engine_->seq_start(0, greedy, prompt);  // someone else uses the freed slot
    ASSERT_EQ(engine_->decode(pre), 0);
    engine_->sample(0, 0, 0);
    ASSERT_TRUE(engine_->seq_unpark(h, 1));
    EXPECT_EQ(engine_->parked_bytes(), 0u);
    auto tail = decode_steps(*engine_, 1, head.back(), n + 4, 5, 8);
    engine_->seq_end(0);
    engine_->seq_end(1);

    head.insert(head.end(), tail.begin(), tail.end());
    EXPECT_EQ(head, reference);
}

// Plain softmax sampling (no truncation) with `seed`.
sf::sampling_params full_distribution(uint64_t seed) {
    sf::sampling_params p;
    p.temperature = 1.0f;
    p.top_k       = 0;
    p.top_p       = 1.0f;
    p.min_p       = 0.0f;
    p.seed        = seed;
    return p;
}

TEST_F(LlamaEngineTest, SeededSamplingResumedFromItsTokensContinuesIdentically) {
    sf::sampling_params p = full_distribution(1234);
    auto prompt           = engine_->tokenize("Sampling must survive a crash", false);

    // Prefills `history`, then samples `more` tokens numbered from `index`.
    auto run_from = [&](std::vector<sf::token_id> history, uint32_t index, int more) {
        engine_->seq_start(0, p, history);
        std::vector<sf::batch_item> pre = {{0, history, 0, true}};
        EXPECT_EQ(engine_->decode(pre), 0);
        std::vector<sf::token_id> out = {engine_->sample(0, 0, index)};
        auto rest = decode_steps(*engine_, 0, out.back(), static_cast<int>(history.size()),
                                 index + 1, more - 1);
        out.insert(out.end(), rest.begin(), rest.end());
        engine_->seq_end(0);
        return out;
    };
    auto reference = run_from(prompt, 0, 16);
    // The sampled tokens vary with the seed (it is not greedy in disguise).
    p.seed = 99;
    EXPECT_NE(run_from(prompt, 0, 16), reference);
    p.seed = 1234;
    // "Crash" after 6 tokens: a new sampler, the prompt and those tokens prefilled at once.
    std::vector<sf::token_id> history = prompt;
    history.insert(history.end(), reference.begin(), reference.begin() + 6);
    std::vector<sf::token_id> expected(reference.begin() + 6, reference.end());
    EXPECT_EQ(run_from(history, 6, 10), expected);
    // Numbering the resumed draws from 0 again would change them (the test can fail).
    EXPECT_NE(run_from(history, 0, 10), expected);
}

// The core chat layer on a random-weight model: only the grammar can make the output valid.
// (Grammar sampling over the 151k vocabulary is slow: these tests take tens of seconds.)
namespace {

sf::chat_options weather_tool(sf::tool_choice_mode mode) {
    sf::chat_options o;
    o.tools.push_back({"get_weather", "Weather of a city",
                       R"({"type":"object","properties":{"city":{"type":"string","maxLength":6},)"
                       R"("days":{"type":"integer","minimum":1,"maximum":7}},)"
                       R"("required":["city","days"]})"});
    o.tools.push_back({"noop", "Does nothing", R"({"type":"object","properties":{}})"});
    o.tool_choice = mode;
    o.tool_name   = mode == sf::tool_choice_mode::NAMED ? "get_weather" : "";
    // Random weights never close an unbounded string: bounded schema, one call, so the
    // grammar alone brings the answer to its end.
    o.parallel_tool_calls = false;
    return o;
}

// Generates with `p` from `prompt` (sampling index from `first_index`) until EOG or `max`.
std::vector<sf::token_id> generate(sf::llama_engine &e, const sf::sampling_params &p,
                                   std::vector<sf::token_id> history, size_t n_generated, int max) {
    EXPECT_TRUE(e.seq_start(0, p, history, n_generated));
    for (size_t at = 0; at < history.size(); at += 100) {  // chunks within the batch size
        const size_t n                  = std::min<size_t>(100, history.size() - at);
        std::vector<sf::batch_item> pre = {{0,
                                            {history.begin() + at, history.begin() + at + n},
                                            static_cast<int32_t>(at),
                                            at + n == history.size()}};
        EXPECT_EQ(e.decode(pre), 0);
    }
    std::vector<sf::token_id> out;
    auto index     = static_cast<uint32_t>(n_generated);
    auto pos       = static_cast<int32_t>(history.size());
    sf::token_id t = e.sample(0, 0, index++);
    while (!e.is_eog(t) && static_cast<int>(out.size()) < max) {
        out.push_back(t);
        std::vector<sf::batch_item> step = {{0, {t}, pos++, true}};
        EXPECT_EQ(e.decode(step), 0);
        t = e.sample(0, 0, index++);
    }
    e.seq_end(0);
    return out;
}

}  // namespace

TEST_F(LlamaEngineTest, NamedToolChoiceRendersAllToolsAndGrammarForTheNamedOne) {
    sf::rendered_prompt out;
    std::string err;
    auto opts = weather_tool(sf::tool_choice_mode::NAMED);
    ASSERT_TRUE(engine_->render_chat({{"user", "Weather?", "", "", "", {}}}, true, opts, out, err))
        << err;
    std::string text;
    for (auto t : out.tokens) text += engine_->token_piece(t);
    EXPECT_NE(text.find("noop"), std::string::npos) << "the prompt lists every tool";
    EXPECT_FALSE(out.constraint.lazy);
    EXPECT_NE(out.constraint.grammar.find("get_weather"), std::string::npos);
    EXPECT_EQ(out.constraint.grammar.find("noop"), std::string::npos);
    // One call only (parallel_tool_calls false), starting at once (no free content first).
    EXPECT_NE(out.constraint.grammar.find("\ntool-calls ::= tool-call space"), std::string::npos)
        << out.constraint.grammar;
    const auto root_at = out.constraint.grammar.find("root ::= ");
    ASSERT_NE(root_at, std::string::npos);
    const auto root = out.constraint.grammar.substr(
        root_at, out.constraint.grammar.find('\n', root_at) - root_at);
    EXPECT_FALSE(std::regex_search(root, std::regex("until-[0-9]+\\? tool-calls"))) << root;
    EXPECT_TRUE(out.parse.parse_tool_calls);
    opts.tool_name = "missing";
    EXPECT_FALSE(engine_->render_chat({{"user", "x", "", "", "", {}}}, true, opts, out, err));
    EXPECT_NE(err.find("missing"), std::string::npos) << err;
}

TEST_F(LlamaEngineTest, ForcedToolCallIsValidJsonAndResumesInTheSameGrammarState) {
    sf::rendered_prompt r;
    std::string err;
    ASSERT_TRUE(engine_->render_chat({{"user", "Weather in Paris?", "", "", "", {}}}, true,
                                     weather_tool(sf::tool_choice_mode::REQUIRED), r, err))
        << err;
    sf::sampling_params p = full_distribution(42);
    p.constraint          = r.constraint;
    auto reference        = generate(*engine_, p, r.tokens, 0, 250);
    std::string text;
    for (auto t : reference) text += engine_->token_piece(t);

    sf::chat_output_parser parser(r.parse, "call_");
    parser.push(text);
    parser.finish();
    const auto &msg = parser.message();
    ASSERT_FALSE(msg.tool_calls.empty()) << text;
    for (const auto &tc : msg.tool_calls) {
        ASSERT_TRUE(tc.name == "get_weather" || tc.name == "noop") << text;
        auto args = nlohmann::json::parse(tc.arguments, nullptr, false);
        ASSERT_TRUE(args.is_object()) << tc.arguments;
        if (tc.name == "get_weather") {
            EXPECT_TRUE(args["city"].is_string()) << tc.arguments;
            ASSERT_TRUE(args["days"].is_number_integer()) << tc.arguments;
            EXPECT_GE(args["days"].get<int>(), 1);
            EXPECT_LE(args["days"].get<int>(), 7);
        }
    }
    // A crash after 7 tokens: the resumed sampler replays them into the grammar.
    ASSERT_GT(reference.size(), 7u);
    auto history = r.tokens;
    history.insert(history.end(), reference.begin(), reference.begin() + 7);
    auto rest = generate(*engine_, p, history, 7, 243);
    EXPECT_EQ(std::vector<sf::token_id>(reference.begin() + 7, reference.end()), rest);
}

// Cluster mode refuses a node whose tokenizer fingerprint differs (issue #17): the fingerprint
// depends on the vocabulary only — not on weights or architecture — and is stable.
TEST_F(LlamaEngineTest, TokenizerFingerprintDependsOnTheVocabularyOnly) {
    const std::string fp = sf::tokenizer_fingerprint(engine_->model());
    EXPECT_EQ(fp.size(), 64u);
    EXPECT_EQ(fp, sf::tokenizer_fingerprint(engine_->model()));
    const std::string other = (dir_ / "other.gguf").string();
    ASSERT_EQ(sf::mkmodel::write_model({"tiny", "llama", 8}, other), "");
    llama_model_params p = llama_model_default_params();
    p.vocab_only         = true;
    llama_model *m       = llama_model_load_from_file(other.c_str(), p);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(sf::tokenizer_fingerprint(m), fp)
        << "same vocabulary, other weights and architecture";
    llama_model_free(m);
}

namespace {

// What this server emitted is accepted back (api-cases-2.md B31): a call cut by max_tokens
// mid-arguments, or a bare value, renders as {"arguments": "<text>"}; llama.cpp's chat layer
// threw on it ("Failed to parse tool call arguments as JSON"), which became a 400.
TEST_F(LlamaEngineTest, AToolCallCutShortRendersWithItsTextKept) {
    const auto opts = weather_tool(sf::tool_choice_mode::AUTO);
    for (const std::string args :
         {R"({"city": "Ulaanb)", "4242", "", R"({"city":"Ulaanbaatar"})"}) {
        std::vector<sf::chat_message> msgs = {
            {"user", "Weather in Paris?", "", "", "", {}},
            {"assistant", "", "", "", "", {{"call_1", "get_weather", args}}},
            {"tool", "Sunny.", "", "call_1", "", {}}};
        sf::rendered_prompt out;
        std::string err;
        ASSERT_TRUE(engine_->render_chat(msgs, true, opts, out, err)) << args << ": " << err;
        EXPECT_NE(out.text.find("get_weather"), std::string::npos) << out.text;
        const std::string kept = args == "4242" ? "4242" : "Ulaanb";
        if (!args.empty()) EXPECT_NE(out.text.find(kept), std::string::npos) << out.text;
    }
}

// An agent's conversation with tools: each message end is a snapshot point for a hybrid
// model's prefix cache, past the system block that lists the tools.
TEST_F(LlamaEngineTest, MessageBoundariesOfAConversationWithToolsFallAtEachMessageEnd) {
    const auto opts                    = weather_tool(sf::tool_choice_mode::REQUIRED);
    std::vector<sf::chat_message> msgs = {
        {"system", "You are a weather agent.", "", "", "", {}},
        {"user", "Weather in Paris and in Rome, please?", "", "", "", {}},
        {"assistant", "", "", "", "", {{"call_1", "get_weather", R"({"city":"Paris"})"}}},
        {"tool", "Sunny, 21 degrees.", "", "call_1", "", {}}};
    sf::rendered_prompt out;
    std::string err;
    ASSERT_TRUE(engine_->render_chat(msgs, true, opts, out, err)) << err;
    const auto b = engine_->message_boundaries(msgs, opts, out);
    // system, user, assistant, tool: four distinct ends, increasing, inside the prompt.
    ASSERT_EQ(b.size(), 4u);
    for (size_t i = 1; i < b.size(); ++i) EXPECT_LT(b[i - 1], b[i]);
    const auto text_upto = [&](int32_t n) {
        std::string t;
        for (int32_t i = 0; i < n; ++i)
            t += engine_->token_piece(out.tokens[static_cast<size_t>(i)]);
        return t;
    };
    const std::string upto = text_upto(b[1]);
    EXPECT_NE(upto.find("get_weather"), std::string::npos) << "past the tools in the system block";
    EXPECT_NE(upto.find("Rome, please?"), std::string::npos) << upto;
    // The last message's end: the tool result is in, the generation prompt is not.
    const std::string all = text_upto(b.back());
    EXPECT_NE(all.find("Sunny, 21 degrees."), std::string::npos) << all;
    EXPECT_LT(b.back() + 2, static_cast<int32_t>(out.tokens.size()))
        << "before the generation prompt";
    // The same conversation one turn later shares those tokens: each boundary is a prefix.
    auto later = msgs;
    later.push_back(
        {"assistant", "", "", "", "", {{"call_2", "get_weather", R"({"city":"Rome"})"}}});
    later.push_back({"tool", "Rain, 14 degrees.", "", "call_2", "", {}});
    sf::rendered_prompt next;
    ASSERT_TRUE(engine_->render_chat(later, true, opts, next, err)) << err;
    for (int32_t p : b)
        EXPECT_TRUE(std::equal(out.tokens.begin(), out.tokens.begin() + p, next.tokens.begin()))
            << p;
}

}  // namespace
