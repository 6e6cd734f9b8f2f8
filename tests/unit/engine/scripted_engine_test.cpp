// The scripted test engine (engine/scripted/) over the real llama.cpp engine on a tiny
// random-weight model: the script picks a reply per conversation, the model's own template
// renders the prompt and the chat parser reads the scripted answer back as a tool call.
#include "engine/scripted/scripted_engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "chat/output_parser.h"
#include "decode_threads.h"
#include "engine/llama/llama_engine.h"
#include "mkmodel.h"

namespace {

const char *kScript = R"({
  "replies": [
    {"when": {"tool": "exec_command", "tool_results": 0},
     "text": "<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\": \"touch made.txt\"}}\n</tool_call>"},
    {"when": {"tool": "bash", "tool_results": 0},
     "text": "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"touch made.txt\"}}\n</tool_call>"},
    {"when": {"tool_results": 1}, "text": "The file is made."},
    {"when": {"user_contains": "title"}, "text": "A title"}
  ]
})";

class ScriptedEngineTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        dir_ = std::filesystem::temp_directory_path() /
               ("sf-scripted-test-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        std::string path = (dir_ / "tiny.gguf").string();
        ASSERT_EQ(sf::mkmodel::write_model({"tiny", "qwen3", 3}, path), "");
        sf::llama_engine_options o;
        o.model_path = path;
        o.ctx_size   = 1024;
        o.parallel   = 2;
        o.batch_size = 256;
        o.threads    = sf::test::k_decode_threads;
        llama_       = new sf::llama_engine(o);
    }
    static void TearDownTestSuite() {
        delete llama_;
        std::filesystem::remove_all(dir_);
    }

    static sf::output_script script() {
        sf::output_script s;
        std::string err;
        EXPECT_TRUE(sf::parse_output_script(kScript, s, err)) << err;
        return s;
    }

    // Renders, prefills and generates on sequence `seq` until end of turn (or `max` tokens);
    // returns the generated text and sets `parse` to how the answer is read back.
    static std::string run(sf::engine_i &e, const std::vector<sf::chat_message> &msgs,
                           const sf::chat_options &opts, sf::chat_parse_spec &parse, int max = 64) {
        sf::rendered_prompt r;
        std::string err;
        EXPECT_TRUE(e.render_chat(msgs, true, opts, r, err)) << err;
        parse = r.parse;
        sf::sampling_params p;
        p.seed = 5;
        EXPECT_TRUE(e.seq_start(0, p, r.tokens));
        std::vector<sf::batch_item> pre = {{0, r.tokens, 0, true}};
        EXPECT_EQ(e.decode(pre), 0);
        std::string text;
        auto pos       = static_cast<int32_t>(r.tokens.size());
        uint32_t index = 0;
        sf::token_id t = e.sample(0, 0, index++);
        while (!e.is_eog(t) && static_cast<int>(index) <= max) {
            text += e.token_piece(t);
            std::vector<sf::batch_item> step = {{0, {t}, pos++, true}};
            EXPECT_EQ(e.decode(step), 0);
            t = e.sample(0, 0, index++);
        }
        e.seq_end(0);
        return text;
    }

    static sf::chat_options tools(std::initializer_list<const char *> names) {
        sf::chat_options o;
        for (const char *n : names)
            o.tools.push_back({n, "Runs a command",
                               R"({"type":"object","properties":{"cmd":{"type":"string"}}})"});
        return o;
    }

    static inline sf::llama_engine *llama_ = nullptr;
    static inline std::filesystem::path dir_;
};

TEST_F(ScriptedEngineTest, FirstTurnCallsTheOfferedToolInTheModelsNativeFormat) {
    sf::scripted_engine e(*llama_, script());
    sf::chat_parse_spec parse;
    const std::string text =
        run(e, {{"user", "make a file", "", "", "", {}}}, tools({"read", "bash"}), parse);
    EXPECT_EQ(text,
              "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"touch "
              "made.txt\"}}\n</tool_call>");
    sf::chat_output_parser parser(parse, "call_");
    parser.push(text);
    parser.finish();
    ASSERT_EQ(parser.message().tool_calls.size(), 1u) << text;
    EXPECT_EQ(parser.message().tool_calls[0].name, "bash");
    EXPECT_EQ(nlohmann::json::parse(parser.message().tool_calls[0].arguments)["command"],
              "touch made.txt");
}

TEST_F(ScriptedEngineTest, AfterTheToolResultItAnswersInTextThenEndsTheTurn) {
    sf::scripted_engine e(*llama_, script());
    sf::chat_message call{"assistant", "", "", "", "", {{"c1", "exec_command", "{}"}}};
    sf::chat_message result{"tool", "", "", "c1", "", {}};
    sf::chat_parse_spec parse;
    const std::string text = run(e, {{"user", "make a file", "", "", "", {}}, call, result},
                                 tools({"exec_command"}), parse);
    EXPECT_EQ(text, "The file is made.");
}

TEST_F(ScriptedEngineTest, UnscriptedConversationsSampleFromTheModel) {
    sf::scripted_engine e(*llama_, script());
    sf::chat_parse_spec parse;
    // No tool the script names, no tool result, no "title": the random model answers.
    const std::string scripted_free = run(e, {{"user", "hello", "", "", "", {}}}, {}, parse, 16);
    const std::string plain = run(*llama_, {{"user", "hello", "", "", "", {}}}, {}, parse, 16);
    EXPECT_EQ(scripted_free, plain);
    EXPECT_EQ(run(e, {{"user", "a title please", "", "", "", {}}}, {}, parse), "A title");
}

TEST_F(ScriptedEngineTest, ParkedSequencesKeepTheirPlaceInTheScript) {
    sf::scripted_engine e(*llama_, script());
    sf::rendered_prompt r;
    std::string err;
    ASSERT_TRUE(
        e.render_chat({{"user", "x", "", "", "", {}}}, true, tools({"exec_command"}), r, err));
    ASSERT_TRUE(e.seq_start(0, {}, r.tokens));
    std::vector<sf::batch_item> pre = {{0, r.tokens, 0, true}};
    ASSERT_EQ(e.decode(pre), 0);
    const sf::token_id first = e.sample(0, 0, 0);
    EXPECT_EQ(e.token_piece(first), "<tool_call>");
    const int64_t h = e.seq_park(0);
    ASSERT_GE(h, 0);
    ASSERT_TRUE(e.seq_unpark(h, 1));
    std::vector<sf::batch_item> step = {{1, {first}, static_cast<int32_t>(r.tokens.size()), true}};
    ASSERT_EQ(e.decode(step), 0);
    EXPECT_EQ(e.token_piece(e.sample(1, 0, 1)), "\n");
    e.seq_end(1);
}

TEST_F(ScriptedEngineTest, ResumedSequencesContinueTheReplyWhereTheyStopped) {
    sf::scripted_engine e(*llama_, script());
    sf::chat_message call{"assistant", "", "", "", "", {{"c1", "bash", "{}"}}};
    sf::chat_message result{"tool", "", "", "c1", "", {}};
    sf::rendered_prompt r;
    std::string err;
    ASSERT_TRUE(e.render_chat({{"user", "x", "", "", "", {}}, call, result}, true, {}, r, err));
    const auto reply = e.tokenize("The file is made.", false);
    ASSERT_GT(reply.size(), 2u);
    // A worker restart resubmits prompt + the 2 tokens already journaled.
    auto history = r.tokens;
    history.insert(history.end(), reply.begin(), reply.begin() + 2);
    ASSERT_TRUE(e.seq_start(0, {}, history, 2));
    std::vector<sf::batch_item> pre = {{0, history, 0, true}};
    ASSERT_EQ(e.decode(pre), 0);
    EXPECT_EQ(e.sample(0, 0, 2), reply[2]);
    e.seq_end(0);
}

TEST(OutputScript, RejectsMalformedScriptsWithAReason) {
    sf::output_script s;
    std::string err;
    EXPECT_FALSE(sf::parse_output_script("[]", s, err));
    EXPECT_FALSE(sf::parse_output_script(R"({"replies":[{"when":{}}]})", s, err));
    EXPECT_NE(err.find("replies[0]"), std::string::npos) << err;
    EXPECT_FALSE(
        sf::parse_output_script(R"({"replies":[{"text":"x","when":{"tools":1}}]})", s, err));
    EXPECT_NE(err.find("when.tools"), std::string::npos) << err;
    EXPECT_FALSE(sf::load_output_script("/nonexistent/script.json", s, err));
    EXPECT_NE(err.find("cannot be read"), std::string::npos) << err;
    ASSERT_TRUE(sf::parse_output_script(R"({"replies":[],"end":"<|endoftext|>"})", s, err)) << err;
    EXPECT_EQ(s.end, "<|endoftext|>");
}

TEST(OutputScript, PicksTheFirstReplyWhoseConditionsAllHold) {
    sf::output_script s;
    std::string err;
    ASSERT_TRUE(sf::parse_output_script(kScript, s, err)) << err;
    sf::chat_options none, shell;
    shell.tools.push_back({"exec_command", "", "{}"});
    const std::vector<sf::chat_message> first = {{"user", "hi", "", "", "", {}}};
    EXPECT_EQ(sf::pick_reply(s, first, none), nullptr);
    EXPECT_EQ(sf::pick_reply(s, first, shell), &s.replies[0]);
    // A user message after the prompt (agents add context) does not hide it.
    const std::vector<sf::chat_message> titled = {{"user", "a title please", "", "", "", {}},
                                                  {"user", "<context>", "", "", "", {}}};
    EXPECT_EQ(sf::pick_reply(s, titled, none), &s.replies[3]);
    auto second = first;
    second.push_back({"tool", "ok", "", "c1", "", {}});
    EXPECT_EQ(sf::pick_reply(s, second, shell), &s.replies[2]);
    second.push_back({"tool", "ok", "", "c2", "", {}});
    EXPECT_EQ(sf::pick_reply(s, second, shell), nullptr);
}

}  // namespace
