// The endurance scenario's API readers (Anthropic, Responses, Ollama streams), the requests its
// conversations build per API, and the schema check of a call.
#include <gtest/gtest.h>

#include <string>

#include "bench/api_streams.h"
#include "bench/endurance.h"
#include "bench/endurance_api.h"

namespace sf::bench {
namespace {

using nlohmann::json;

// Reads `s` with a `Reader`, fed in two parts split mid-line, as the network does.
template <class Reader>
stream_result read(const std::string &s) {
    stream_result r;
    Reader rd(r);
    const size_t half = s.size() / 2;
    rd.feed(s.data(), half, 0.5);
    rd.feed(s.data() + half, s.size() - half, 0.75);
    return r;
}

// The usage figures and finish reason of a finished stream.
void expect_end(const stream_result &r, int prompt, int cached, int completion,
                const std::string &finish) {
    EXPECT_TRUE(r.done);
    EXPECT_EQ(r.prompt_tokens, prompt);
    EXPECT_EQ(r.cached_tokens, cached);
    EXPECT_EQ(r.completion_tokens, completion);
    EXPECT_EQ(r.finish_reason, finish);
}

TEST(BenchApiStreams, AnthropicToolUseAndCacheUsage) {
    const stream_result r = read<anthropic_reader>(
        "event: message_start\n"
        "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,"
        "\"cache_read_input_tokens\":250,\"output_tokens\":0}}}\n\n"
        "event: content_block_start\n"
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
        "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"search\",\"input\":{}}}\n\n"
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
        "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"q\"}}\n\n"
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
        "{\"type\":\"input_json_delta\",\"partial_json\":\"\\\":1}\"}}\n\n"
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},"
        "\"usage\":{\"output_tokens\":7}}\n\n"
        "data: {\"type\":\"message_stop\"}\n\n");
    expect_end(r, 251, 250, 7, "tool_calls");
    EXPECT_EQ(r.tool_calls, 1);
    EXPECT_EQ(r.tool_name, "search");
    EXPECT_EQ(r.tool_call_id, "toolu_1");
    EXPECT_EQ(r.tool_arguments, "{\"q\":1}");
    EXPECT_EQ(r.pieces.size(), 3u);  // the name, then two argument pieces
}

TEST(BenchApiStreams, AnthropicErrorEventCuts) {
    const stream_result r = read<anthropic_reader>(
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
        "\"message\":\"worker died\"}}\n\n");
    EXPECT_TRUE(r.cut);
    EXPECT_EQ(r.error, "worker died");
    EXPECT_FALSE(r.done);
}

TEST(BenchApiStreams, ResponsesFunctionCallAndUsage) {
    const stream_result r = read<responses_reader>(
        "data: {\"type\":\"response.output_item.added\",\"item\":{\"type\":"
        "\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"read_file\"}}"
        "\n\n"
        "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\","
        "\"delta\":\"{}\"}\n\n"
        "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":"
        "90,\"input_tokens_details\":{\"cached_tokens\":80},\"output_tokens\":5}}}\n\n");
    expect_end(r, 90, 80, 5, "tool_calls");
    EXPECT_EQ(r.tool_name, "read_file");
    EXPECT_EQ(r.tool_call_id, "call_1");
    EXPECT_EQ(r.tool_arguments, "{}");

    const stream_result cut = read<responses_reader>(
        "data: {\"type\":\"response.output_text.delta\",\"delta\":\"ab\"}\n\n"
        "data: {\"type\":\"response.incomplete\",\"response\":{}}\n\n");
    EXPECT_TRUE(cut.done);
    EXPECT_EQ(cut.finish_reason, "length");
    EXPECT_EQ(cut.pieces.size(), 1u);
}

TEST(BenchApiStreams, OllamaContentToolCallsAndPromptEval) {
    const stream_result r = read<ollama_reader>(
        "{\"message\":{\"role\":\"assistant\",\"content\":\"{\\\"na\"},\"done\":false}\n"
        "{\"message\":{\"role\":\"assistant\",\"content\":\"me\"},\"done\":false}\n"
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,"
        "\"done_reason\":\"stop\",\"prompt_eval_count\":12,\"eval_count\":3}\n");
    expect_end(r, -1, -1, 3, "stop");  // Ollama reports no prompt total
    EXPECT_EQ(r.pieces.size(), 2u);
    EXPECT_EQ(r.prefilled_tokens, 12);

    const stream_result t = read<ollama_reader>(
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{"
        "\"function\":{\"name\":\"search\",\"arguments\":{\"query\":\"x\"}}}]},"
        "\"done\":true,\"done_reason\":\"stop\"}\n");
    EXPECT_EQ(t.tool_name, "search");
    EXPECT_EQ(json::parse(t.tool_arguments), json({{"query", "x"}}));
    EXPECT_EQ(t.finish_reason, "tool_calls");
}

TEST(BenchEnduranceApi, ForcedCallsInEachApi) {
    auto anthropic = make_conversation("anthropic", "sys", "task");
    json b         = anthropic->request("", 64);
    EXPECT_EQ(b["tool_choice"]["type"], "any");
    EXPECT_EQ(b["tool_choice"]["disable_parallel_tool_use"], true);
    EXPECT_EQ(b["system"], "sys");
    EXPECT_TRUE(b["tools"][0].contains("input_schema"));
    EXPECT_EQ(anthropic->request("search", 64)["tool_choice"],
              json({{"type", "tool"}, {"name", "search"}, {"disable_parallel_tool_use", true}}));

    auto responses = make_conversation("responses", "sys", "task");
    b              = responses->request("read_file", 64);
    EXPECT_EQ(b["tool_choice"], json({{"type", "function"}, {"name", "read_file"}}));
    EXPECT_EQ(b["tools"][0]["type"], "function");
    EXPECT_EQ(b["max_output_tokens"], 64);

    auto openai = make_conversation("openai", "sys", "task");
    EXPECT_EQ(openai->request("", 64)["tool_choice"], "required");

    // Ollama: the call forced by a schema of the call itself.
    auto ollama = make_conversation("ollama", "sys", "task");
    b           = ollama->request("", 64);
    EXPECT_EQ(b["format"]["anyOf"].size(), endurance_tools().size());
    b = ollama->request("search", 64);
    EXPECT_EQ(b["format"]["properties"]["name"]["const"], "search");
    EXPECT_EQ(b["options"]["num_predict"], 64);
}

TEST(BenchEnduranceApi, OllamaContentCallBecomesTheCall) {
    auto ollama = make_conversation("ollama", "sys", "task");
    stream_result s;
    s.pieces        = {"{\"name\":\"read_file\",", "\"arguments\":{\"path\":\"a\"}}"};
    s.finish_reason = "stop";
    ollama->normalize(s);
    EXPECT_EQ(s.tool_calls, 1);
    EXPECT_EQ(s.tool_name, "read_file");
    EXPECT_EQ(check_tool_call(s.tool_name, s.tool_arguments), "");
    // The answer goes back as written, the result as the tool's message.
    ollama->append(s, true, "", 1, "result");
    json next = ollama->request("", 64)["messages"];
    ASSERT_EQ(next.size(), 4u);
    EXPECT_EQ(next[2]["content"], "{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}");
    EXPECT_EQ(next[3]["role"], "tool");
    EXPECT_EQ(next[3]["tool_name"], "read_file");
}

TEST(BenchEnduranceApi, SchemaCheck) {
    EXPECT_EQ(check_tool_call("search", "{\"query\":\"x\",\"max_results\":3}"), "");
    EXPECT_NE(check_tool_call("search", "{\"query\":\"x\",\"max_results\":30}"), "");
    EXPECT_NE(check_tool_call("search", "{\"query\":\"x\"}"), "");
    EXPECT_NE(check_tool_call("nope", "{}"), "");
    EXPECT_NE(check_tool_call("read_file", "{\"path\":"), "");
}

}  // namespace
}  // namespace sf::bench
