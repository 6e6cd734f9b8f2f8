// Unit tests of the Ollama, embeddings and Responses API adapters (no server).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>

#include "api/embeddings/embed_request.h"
#include "api/embeddings/embed_response.h"
#include "api/ollama/ollama_request.h"
#include "api/ollama/ollama_template.h"
#include "api/responses/responses_request.h"
#include "api/responses/responses_response.h"

using namespace sf;
using json = nlohmann::json;

TEST(OllamaTemplate, RendersTheSupportedSubsetAndStopsAtResponse) {
    std::string out, err;
    ASSERT_TRUE(
        render_ollama_template("{{- if .System }}<s>{{ .System }}</s>\n{{- end }} [U] {{ .Prompt "
                               "}} [A] {{ .Response }} tail",
                               "sys", "hi", out, err));
    EXPECT_EQ(out, "<s>sys</s> [U] hi [A] ");
    ASSERT_TRUE(render_ollama_template("{{ if .System }}S{{ else }}none{{ end }}|{{ .Prompt }}", "",
                                       "p", out, err));
    EXPECT_EQ(out, "none|p");
    EXPECT_FALSE(render_ollama_template("{{ range .Messages }}x{{ end }}", "", "p", out, err));
    EXPECT_NE(err.find("range .Messages"), std::string::npos);
    EXPECT_FALSE(render_ollama_template("{{ .Prompt ", "", "p", out, err));
    EXPECT_FALSE(render_ollama_template("{{ end }}", "", "p", out, err));
}

// Issue #38 item 6: each {{ .Prompt }} copies the prompt; the output is bounded, checked before
// each piece is appended, so nothing larger than the bound is ever built.
TEST(OllamaTemplate, OutputIsBounded) {
    std::string out, err;
    std::string tmpl;
    for (int i = 0; i < 10; ++i) tmpl += "{{ .Prompt }}";
    ASSERT_TRUE(render_ollama_template(tmpl, "", std::string(10, 'p'), out, err, 100));
    EXPECT_EQ(out.size(), 100u);  // exactly at the bound: accepted
    EXPECT_FALSE(render_ollama_template(tmpl + "x", "", std::string(10, 'p'), out, err, 100));
    EXPECT_NE(err.find("larger than 100 bytes"), std::string::npos) << err;
    EXPECT_LE(out.capacity(), 200u);  // stopped at the bound, not after the whole render
    EXPECT_FALSE(render_ollama_template("{{ if .System }}{{ .System }}{{ .System }}{{ end }}",
                                        std::string(60, 's'), "p", out, err, 100));
}

TEST(OllamaRequest, DefaultsOptionsAndKeepAlive) {
    generate_request g;
    ollama_options o;
    api_error e;
    ASSERT_TRUE(parse_ollama_chat(
        R"({"model":"m","messages":[{"role":"user","content":"x"}],
            "options":{"num_predict":7,"seed":5,"stop":["a","b"],"mirostat":2,"top_k":0},
            "keep_alive":"1h30m"})",
        g, o, e))
        << e.message;
    EXPECT_TRUE(o.stream);
    EXPECT_FALSE(o.unload);
    EXPECT_FLOAT_EQ(g.sampling.temperature, 0.8f);
    EXPECT_FLOAT_EQ(g.sampling.repeat_penalty, 1.1f);
    EXPECT_EQ(g.sampling.max_tokens, 7);
    EXPECT_EQ(g.sampling.top_k, 0);
    EXPECT_TRUE(g.has_seed);
    EXPECT_EQ(g.sampling.stop, (std::vector<std::string>{"a", "b"}));

    generate_request g2;
    ollama_options o2;
    ASSERT_TRUE(parse_ollama_generate(R"({"model":"m","keep_alive":0})", g2, o2, e));
    EXPECT_TRUE(o2.load_only);
    EXPECT_TRUE(o2.unload);
    ollama_options o3;
    EXPECT_FALSE(parse_ollama_generate(R"({"model":"m","keep_alive":"5 parsecs"})", g2, o3, e));
    EXPECT_EQ(e.param, "keep_alive");
}

TEST(OllamaRequest, FormatThinkAndToolsGoToTheChatLayer) {
    generate_request g;
    ollama_options o;
    api_error e;
    ASSERT_TRUE(parse_ollama_chat(
        R"({"model":"m","messages":[{"role":"user","content":"x"},
             {"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},
             {"role":"tool","content":"r","tool_name":"f"}],
            "format":"json","think":"high",
            "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]})",
        g, o, e))
        << e.message;
    EXPECT_EQ(g.chat.json_schema, R"({"type":"object"})");
    EXPECT_EQ(g.chat.reasoning, 1);
    EXPECT_EQ(g.chat.reasoning_effort, "high");
    ASSERT_EQ(g.chat.tools.size(), 1u);
    EXPECT_EQ(g.messages[1].tool_calls.at(0).arguments, R"({"a":1})");
    EXPECT_EQ(g.messages[2].name, "f");
    // Raw prompts skip the template, so grammar/reasoning cannot apply.
    generate_request g2;
    ollama_options o2;
    EXPECT_FALSE(parse_ollama_generate(R"({"model":"m","prompt":"p","raw":true,"format":"json"})",
                                       g2, o2, e));
}

TEST(Embeddings, InputFormsAndBase64) {
    embed_job j;
    api_error e;
    ASSERT_TRUE(parse_openai_embeddings(R"({"input":[[1,2],[3]]})", j, e));
    ASSERT_EQ(j.inputs.size(), 2u);
    EXPECT_FALSE(j.inputs[0].is_text);
    EXPECT_EQ(j.inputs[1].tokens, std::vector<token_id>{3});
    embed_job k;
    EXPECT_FALSE(parse_openai_embeddings(R"({"input":[1,"a"]})", k, e));
    embed_job m;
    EXPECT_FALSE(parse_openai_embeddings(R"({"input":[]})", m, e));

    std::vector<float> v{3.0f, 4.0f};
    l2_normalize(v);
    EXPECT_FLOAT_EQ(v[0], 0.6f);
    auto body = json::parse(openai_embeddings_body("m", {v}, true, 2));
    // Two float32 are 8 bytes: 12 base64 characters.
    const std::string b64 = body["data"][0]["embedding"];
    EXPECT_EQ(b64.size(), 12u);
    EXPECT_EQ(body["usage"]["prompt_tokens"], 2);
}

namespace {

std::vector<json> events_of(const std::string &sse) {
    std::vector<json> out;
    size_t pos = 0;
    while ((pos = sse.find("data: ", pos)) != std::string::npos) {
        size_t end = sse.find("\n\n", pos);
        out.push_back(json::parse(sse.substr(pos + 6, end - pos - 6)));
        pos = end;
    }
    return out;
}

chat_delta delta(chat_delta::kind k, std::string text, size_t idx = 0) {
    chat_delta d;
    d.type       = k;
    d.text       = std::move(text);
    d.tool_index = idx;
    if (k == chat_delta::kind::TOOL_CALL_START) {
        d.id   = "call_" + std::to_string(idx);
        d.name = "f";
    }
    return d;
}

}  // namespace

TEST(ResponsesBuilder, OneItemAtATimeWithIncreasingSequenceNumbers) {
    responses_builder b("resp_1", "m", 1, json::object());
    std::string sse = b.start();
    using K         = chat_delta::kind;
    sse += b.apply({delta(K::REASONING, "think"), delta(K::CONTENT, "\n\n"),
                    delta(K::TOOL_CALL_START, ""), delta(K::TOOL_CALL_ARGS, "{\"a\":"),
                    delta(K::TOOL_CALL_ARGS, "1}"), delta(K::CONTENT, "after")});
    sse += b.finish(finish_reason::STOP, "", 5, 7, 3);
    auto evs = events_of(sse);
    std::vector<std::string> types;
    for (size_t i = 0; i < evs.size(); ++i) {
        EXPECT_EQ(evs[i]["sequence_number"], i);
        types.push_back(evs[i]["type"]);
    }
    const std::vector<std::string> expect = {"response.created",
                                             "response.in_progress",
                                             "response.output_item.added",
                                             "response.content_part.added",
                                             "response.reasoning_text.delta",
                                             "response.reasoning_text.done",
                                             "response.content_part.done",
                                             "response.output_item.done",
                                             "response.output_item.added",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.done",
                                             "response.output_item.done",
                                             "response.output_item.added",
                                             "response.content_part.added",
                                             "response.output_text.delta",
                                             "response.output_text.done",
                                             "response.content_part.done",
                                             "response.output_item.done",
                                             "response.completed"};
    EXPECT_EQ(types, expect);
    json r = b.response();
    ASSERT_EQ(r["output"].size(), 3u);  // the whitespace between made no message
    EXPECT_EQ(r["output"][1]["arguments"], "{\"a\":1}");
    EXPECT_EQ(r["output"][2]["content"][0]["text"], "after");
    EXPECT_EQ(r["usage"]["total_tokens"], 12);
    EXPECT_EQ(r["usage"]["input_tokens"], 5);  // the whole prompt, the cached part included
    EXPECT_EQ(r["usage"]["input_tokens_details"]["cached_tokens"], 3);
}

// A reader re-attaching with starting_after=N replays the same deltas through a fresh builder:
// it gets exactly the events after N, with the same sequence numbers and bodies.
TEST(ResponsesBuilder, SkipThroughReplaysExactlyTheEventsAfterN) {
    using K  = chat_delta::kind;
    auto run = [](int64_t skip) {
        responses_builder b("resp_1", "m", 1, json::object());
        b.skip_through(skip);
        std::string sse = b.start();
        sse += b.apply({delta(K::CONTENT, "a")});
        sse += b.apply({delta(K::CONTENT, "b")});
        sse += b.finish(finish_reason::STOP, "", 2, 2, 0);
        return events_of(sse);
    };
    const auto all = run(-1);
    for (int64_t n : {int64_t{0}, int64_t{4}, int64_t{6}, static_cast<int64_t>(all.size()) - 1}) {
        const auto rest = run(n);
        ASSERT_EQ(rest.size(), all.size() - static_cast<size_t>(n) - 1) << n;
        for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(rest[i], all[n + 1 + i]);
    }
}

TEST(ResponsesBuilder, CancelledEndsWithItsOwnTerminalEvent) {
    responses_builder b("r", "m", 1, json{{"background", true}});
    b.start();
    b.apply({delta(chat_delta::kind::CONTENT, "x")});
    auto ev = events_of(b.finish(finish_reason::CANCELLED, "", 1, 1, 0));
    EXPECT_EQ(ev[ev.size() - 2]["type"], "response.output_item.done");
    EXPECT_EQ(ev.back()["type"], "response.cancelled");
    EXPECT_EQ(ev.back()["response"]["status"], "cancelled");
    EXPECT_EQ(ev.back()["response"]["background"], true);
}

TEST(ResponsesBuilder, LengthIsIncompleteAndErrorsFail) {
    responses_builder a("r", "m", 1, json::object());
    a.start();
    a.apply({delta(chat_delta::kind::CONTENT, "x")});
    auto ev = events_of(a.finish(finish_reason::LENGTH, "", 1, 1, 0));
    EXPECT_EQ(ev.back()["type"], "response.incomplete");
    EXPECT_EQ(ev.back()["response"]["incomplete_details"]["reason"], "max_output_tokens");
    responses_builder f("r", "m", 1, json::object());
    f.start();
    ev = events_of(f.finish(finish_reason::ERROR, "boom", 1, 0, 0));
    EXPECT_EQ(ev.back()["type"], "response.failed");
    EXPECT_EQ(ev.back()["response"]["error"]["message"], "boom");
}

TEST(ResponsesRequest, ItemsBecomeChatTurns) {
    generate_request g;
    responses_options o;
    api_error e;
    ASSERT_TRUE(parse_responses_request(
        R"({"instructions":"be nice","input":[
            {"role":"developer","content":"dev"},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},
            {"type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}]},
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":"42"}],
           "tools":[{"type":"function","name":"f"}],"tool_choice":"required",
           "reasoning":{"effort":"minimal"},"max_output_tokens":9})",
        g, o, e))
        << e.message;
    ASSERT_EQ(g.messages.size(), 4u);
    EXPECT_EQ(g.messages[0].role, "system");
    EXPECT_EQ(g.messages[0].content, "be nice\n\ndev");
    EXPECT_EQ(g.messages[2].role, "assistant");
    EXPECT_EQ(g.messages[2].reasoning_content, "hmm");
    EXPECT_EQ(g.messages[2].tool_calls.at(0).id, "c1");
    EXPECT_EQ(g.messages[3].role, "tool");
    EXPECT_EQ(g.messages[3].name, "f");
    EXPECT_EQ(g.chat.tool_choice, tool_choice_mode::REQUIRED);
    EXPECT_EQ(g.chat.reasoning, 0);
    EXPECT_EQ(g.sampling.max_tokens, 9);
    EXPECT_EQ(o.echo["max_output_tokens"], 9);
}
