// Unit tests of the Responses API as Codex uses it (issue #19, cases B29-B31, B33): tools
// (custom, namespace, hosted ones skipped), every input item type, and the builder's custom
// tool calls, namespaces and item statuses. No server.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/responses/responses_request.h"
#include "api/responses/responses_response.h"
#include "api/responses/responses_tools.h"

using namespace sf;
using json = nlohmann::json;

namespace {

bool parse(const json &body, generate_request &g, responses_options &o, api_error &e) {
    return parse_responses_request(body.dump(), g, o, e);
}

api_error parse_error(const json &body) {
    generate_request g;
    responses_options o;
    api_error e;
    EXPECT_FALSE(parse(body, g, o, e)) << body.dump();
    return e;
}

std::vector<json> events(const std::string &sse) {
    std::vector<json> out;
    for (size_t pos = 0; (pos = sse.find("data: ", pos)) != std::string::npos;) {
        const size_t end = sse.find("\n\n", pos);
        out.push_back(json::parse(sse.substr(pos + 6, end - pos - 6)));
        pos = end;
    }
    return out;
}

chat_delta call_start(const std::string &name) {
    chat_delta d;
    d.type = chat_delta::kind::TOOL_CALL_START;
    d.id   = "call_0";
    d.name = name;
    return d;
}

chat_delta args(const std::string &text) {
    chat_delta d;
    d.type = chat_delta::kind::TOOL_CALL_ARGS;
    d.text = text;
    return d;
}

const json k_tools = json::parse(R"([
  {"type":"function","name":"shell","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}},
  {"type":"web_search"},{"type":"image_generation"},{"type":"local_shell"},{"type":"some_future_tool"},
  {"type":"custom","name":"apply_patch","description":"patch",
   "format":{"type":"grammar","syntax":"lark","definition":"start: \"x\""}},
  {"type":"namespace","name":"mcp__fs","description":"files",
   "tools":[{"type":"function","name":"read"},{"type":"web_search"}]}])");

}  // namespace

TEST(ResponsesTools, HostedToolsAreSkippedCustomAndNamespacedOnesOffered) {
    generate_request g;
    responses_options o;
    api_error e;
    ASSERT_TRUE(parse({{"input", "x"}, {"tools", k_tools}}, g, o, e)) << e.message;
    std::vector<std::string> names;
    for (const auto &t : g.chat.tools) names.push_back(t.name);
    EXPECT_EQ(names, (std::vector<std::string>{"shell", "apply_patch", "mcp__fs__read"}));
    // The custom tool takes one string; its grammar is told to the model in the description.
    EXPECT_EQ(json::parse(g.chat.tools[1].parameters)["required"], json::array({"input"}));
    EXPECT_NE(g.chat.tools[1].description.find("lark grammar"), std::string::npos);
    EXPECT_EQ(o.skipped_tools,
              (std::vector<std::string>{"web_search", "image_generation", "local_shell",
                                        "some_future_tool", "mcp__fs/web_search"}));
    const auto map = responses_tool_map::of(k_tools);
    ASSERT_NE(map.find("mcp__fs__read"), nullptr);
    EXPECT_EQ(map.find("mcp__fs__read")->ns, "mcp__fs");
    EXPECT_EQ(map.find("mcp__fs__read")->name, "read");
    EXPECT_TRUE(map.is_custom("apply_patch"));
    EXPECT_EQ(responses_tool_map::chat_name("mcp__x__", "t"), "mcp__x__t");
}

TEST(ResponsesTools, MalformedCallableToolsAndForcedHostedToolsAre400s) {
    EXPECT_EQ(parse_error({{"input", "x"}, {"tools", {{{"type", "function"}}}}}).param,
              "tools[0].name");
    EXPECT_EQ(parse_error({{"input", "x"},
                           {"tools", {{{"type", "namespace"}, {"name", "n"}, {"tools", 3}}}}})
                  .param,
              "tools[0].tools");
    EXPECT_EQ(
        parse_error({{"input", "x"}, {"tools", k_tools}, {"tool_choice", {{"type", "mcp"}}}}).param,
        "tool_choice");
    EXPECT_EQ(parse_error({{"input", "x"},
                           {"tools", k_tools},
                           {"tool_choice", {{"type", "function"}, {"name", "read"}}}})
                  .param,
              "tool_choice");  // read lives in a namespace: the choice must name it
    generate_request g;
    responses_options o;
    api_error e;
    ASSERT_TRUE(
        parse({{"input", "x"},
               {"tools", k_tools},
               {"tool_choice", {{"type", "function"}, {"name", "read"}, {"namespace", "mcp__fs"}}}},
              g, o, e))
        << e.message;
    EXPECT_EQ(g.chat.tool_choice, tool_choice_mode::NAMED);
    EXPECT_EQ(g.chat.tool_name, "mcp__fs__read");
    g = {};
    ASSERT_TRUE(parse({{"input", "x"},
                       {"tools", k_tools},
                       {"tool_choice",
                        {{"type", "allowed_tools"},
                         {"mode", "required"},
                         {"tools", {{{"type", "custom"}, {"name", "apply_patch"}}}}}}},
                      g, o, e))
        << e.message;
    ASSERT_EQ(g.chat.tools.size(), 1u);
    EXPECT_EQ(g.chat.tool_choice, tool_choice_mode::REQUIRED);
}

TEST(ResponsesInput, EveryItemCodexReplaysBecomesChatTurns) {
    generate_request g;
    responses_options o;
    api_error e;
    const json input = json::parse(R"([
      {"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
      {"type":"reasoning","id":"rs","summary":[],"content":[{"type":"reasoning_text","text":"plan"}],"encrypted_content":"gAAAAforeign"},
      {"type":"function_call","call_id":"c1","name":"read","namespace":"mcp__fs","arguments":"{\"path\":\"a\"}"},
      {"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"one"},{"type":"output_text","text":"two"},{"type":"input_image","image_url":"data:image/png;base64,AA=="}]},
      {"type":"function_call","call_id":"c2","name":"shell","arguments":"{ \"cmd\":","status":"incomplete"},
      {"type":"function_call_output","call_id":"c2","output":""},
      {"type":"custom_tool_call","call_id":"c3","name":"apply_patch","input":"*** Begin"},
      {"type":"custom_tool_call_output","call_id":"c3","output":"ok"},
      {"type":"local_shell_call","call_id":"c4","status":"completed","action":{"type":"exec","command":["ls"]}},
      {"type":"function_call_output","call_id":"c4","output":null},
      {"type":"web_search_call","id":"ws","status":"completed","action":{"type":"search","query":"q"}},
      {"type":"compaction","encrypted_content":"x"},
      {"type":"message","role":"assistant","content":[{"type":"output_text","text":"done","annotations":[]}]}])");
    ASSERT_TRUE(parse({{"input", input},
                       {"tools", k_tools},
                       {"include", {"reasoning.encrypted_content"}},
                       {"truncation", "auto"},
                       {"prompt_cache_key", "k"},
                       {"store", false}},
                      g, o, e))
        << e.message;
    const auto &m = g.messages;
    ASSERT_EQ(m.size(), 10u);
    EXPECT_EQ(m[1].role, "assistant");
    EXPECT_EQ(m[1].reasoning_content, "plan");
    ASSERT_EQ(m[1].tool_calls.size(), 1u);
    EXPECT_EQ(m[1].tool_calls[0].name, "mcp__fs__read");
    EXPECT_EQ(m[2].name, "mcp__fs__read");
    EXPECT_EQ(m[2].content, "one\ntwo\n[image omitted: this model cannot see images]");
    // A call cut short (sent back as the server made it) keeps its text; the engine renders it
    // as {"arguments": text} (LlamaEngineTest.AToolCallCutShortRendersWithItsTextKept).
    EXPECT_EQ(m[3].tool_calls[0].arguments, "{ \"cmd\":");
    EXPECT_EQ(json::parse(m[5].tool_calls[0].arguments), (json{{"input", "*** Begin"}}));
    EXPECT_EQ(m[7].tool_calls[0].name, "local_shell");
    EXPECT_EQ(m[8].content, "");
    EXPECT_EQ(m[9].content, "done");
    EXPECT_EQ(o.echo["truncation"], "auto");
    EXPECT_EQ(o.echo["prompt_cache_key"], "k");
}

TEST(ResponsesInput, EmptyInputIsOneEmptyTurnAndUnknownItemsAre400s) {
    generate_request g;
    responses_options o;
    api_error e;
    ASSERT_TRUE(parse({{"input", json::array()}, {"max_output_tokens", 1}}, g, o, e)) << e.message;
    ASSERT_EQ(g.messages.size(), 1u);
    EXPECT_EQ(g.messages[0].role, "user");
    auto ref = parse_error({{"input", {{{"type", "item_reference"}, {"id", "msg_unknown"}}}}});
    EXPECT_EQ(ref.param, "input[0]");
    EXPECT_NE(ref.message.find("msg_unknown"), std::string::npos);
    EXPECT_NE(parse_error({{"input", {{{"type", "computer_call_output"}, {"call_id", "c"}}}}})
                  .message.find("computer_call_output"),
              std::string::npos);
    EXPECT_EQ(parse_error({{"input", "x"}, {"truncation", "sometimes"}}).param, "truncation");
    EXPECT_EQ(parse_error({{"input", "x"}, {"include", 5}}).param, "include");
}

TEST(ResponsesBuilder, CustomToolCallsAndNamespacesInTheClientsTerms) {
    responses_builder b("resp_1", "m", 1, json{{"tools", k_tools}});
    std::string sse = b.start();
    sse += b.apply({call_start("apply_patch"), args("{\"input\": \"*** Be"), args("gin\\n\"}")});
    sse += b.apply({call_start("mcp__fs__read"), args("{\"path\":\"a\"}")});
    sse += b.finish(finish_reason::STOP, "", 3, 9, 0);
    const auto ev = events(sse);
    std::vector<std::string> types;
    for (const auto &e : ev) types.push_back(e["type"]);
    const std::vector<std::string> expect = {"response.created",
                                             "response.in_progress",
                                             "response.output_item.added",
                                             "response.custom_tool_call_input.delta",
                                             "response.custom_tool_call_input.done",
                                             "response.output_item.done",
                                             "response.output_item.added",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.done",
                                             "response.output_item.done",
                                             "response.completed"};
    EXPECT_EQ(types, expect);
    EXPECT_EQ(ev[2]["item"]["type"], "custom_tool_call");
    EXPECT_EQ(ev[2]["item"]["input"], "");
    EXPECT_EQ(ev[4]["input"], "*** Begin\n");
    const json out = b.response()["output"];
    EXPECT_EQ(out[0]["type"], "custom_tool_call");
    EXPECT_EQ(out[0]["name"], "apply_patch");
    EXPECT_EQ(out[0]["input"], "*** Begin\n");
    EXPECT_EQ(out[0]["status"], "completed");
    EXPECT_EQ(out[1]["type"], "function_call");
    EXPECT_EQ(out[1]["namespace"], "mcp__fs");
    EXPECT_EQ(out[1]["name"], "read");
}

TEST(ResponsesBuilder, TheItemCutByTheLimitIsIncompleteAndEveryItemHasAStatus) {
    responses_builder b("resp_1", "m", 1, json{{"tools", k_tools}});
    b.start();
    chat_delta think;
    think.type = chat_delta::kind::REASONING;
    think.text = "hm";
    auto ev    = events(b.apply({think, call_start("shell"), args("{\"cmd\":\"l")}));
    EXPECT_EQ(ev[0]["item"]["status"], "in_progress");  // the reasoning item
    b.apply({call_start("apply_patch"), args("{\"input\":\"ab\\")});
    b.finish(finish_reason::LENGTH, "", 3, 9, 0);
    const json out = b.response()["output"];
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0]["status"], "completed");
    EXPECT_EQ(out[1]["status"], "completed");
    EXPECT_EQ(out[2]["status"], "incomplete");
    EXPECT_EQ(out[2]["input"], "ab");  // as much of the string as was written
}
