#include "api/openai/openai_request.h"

#include <gtest/gtest.h>

using sf::api_error;
using sf::generate_request;
using sf::openai_options;

namespace {

bool chat(const std::string &body, generate_request &r, openai_options &o, api_error &e) {
    return sf::parse_openai_chat(body, r, o, e);
}

api_error chat_error(const std::string &body) {
    generate_request r;
    openai_options o;
    api_error e;
    EXPECT_FALSE(chat(body, r, o, e)) << body;
    return e;
}

}  // namespace

TEST(OpenAIRequest, ParsesAChatRequest) {
    generate_request r;
    openai_options o;
    api_error e;
    ASSERT_TRUE(
        chat(R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":10,
        "temperature":0,"seed":3,"stop":"END","stream":true,"stream_options":{"include_usage":true}})",
             r, o, e))
        << e.message;
    EXPECT_EQ(r.model, "m");
    ASSERT_EQ(r.messages.size(), 1u);
    EXPECT_EQ(r.messages[0].content, "hi");
    EXPECT_EQ(r.sampling.max_tokens, 10);
    EXPECT_EQ(r.sampling.temperature, 0.0f);
    EXPECT_TRUE(r.has_seed);
    EXPECT_EQ(r.sampling.stop, std::vector<std::string>{"END"});
    EXPECT_TRUE(o.stream);
    EXPECT_TRUE(o.include_usage);
}

TEST(OpenAIRequest, B13_DeveloperRoleBecomesOneLeadingSystemMessage) {
    generate_request r;
    openai_options o;
    api_error e;
    ASSERT_TRUE(chat(
        R"({"messages":[{"role":"developer","content":"Rhyme."},{"role":"system","content":"Be short."},
        {"role":"user","content":"Capital of France?"}]})",
        r, o, e));
    ASSERT_EQ(r.messages.size(), 2u);
    EXPECT_EQ(r.messages[0].role, "system");
    EXPECT_EQ(r.messages[0].content, "Rhyme.\n\nBe short.");
    EXPECT_EQ(r.messages[1].role, "user");
}

TEST(OpenAIRequest, B15_TextPartsAreJoinedAndImagesRejected) {
    generate_request r;
    openai_options o;
    api_error e;
    ASSERT_TRUE(chat(
        R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]})",
        r, o, e));
    EXPECT_EQ(r.messages[0].content, "a\nb");
    auto err = chat_error(
        R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})");
    EXPECT_EQ(err.status, 400);
    EXPECT_EQ(err.param, "messages[0].content");
}

TEST(OpenAIRequest, B10_MaxCompletionTokensWinsOverMaxTokens) {
    generate_request r;
    openai_options o;
    api_error e;
    ASSERT_TRUE(chat(
        R"({"messages":[{"role":"user","content":"x"}],"max_tokens":50,"max_completion_tokens":10})",
        r, o, e));
    EXPECT_EQ(r.sampling.max_tokens, 10);
}

TEST(OpenAIRequest, BadInputsNameTheirField) {
    EXPECT_EQ(chat_error("{not json").code, "invalid_json");
    EXPECT_EQ(chat_error("[1,2]").code, "invalid_json");
    EXPECT_EQ(chat_error("{}").param, "messages");
    EXPECT_EQ(chat_error(R"({"messages":[]})").param, "messages");
    EXPECT_EQ(chat_error(R"({"messages":"hi"})").param, "messages");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"wizard","content":"x"}]})").param,
              "messages[0].role");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})").param,
              "max_tokens");
    EXPECT_EQ(
        chat_error(R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":-3})")
            .param,
        "max_completion_tokens");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":"5"})").param,
              "max_tokens");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"temperature":7})").param,
              "temperature");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"n":2})").param, "n");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"n":0})").param, "n");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"model":5})").param,
              "model");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"logprobs":true})").param,
              "logprobs");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"stop":[1]})").param,
              "stop");
    // json_object is supported now (grammar-enforced); an unknown type and an unenforceable
    // schema keyword are 400s naming the field.
    EXPECT_EQ(
        chat_error(
            R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}})")
            .param,
        "response_format.type");
    EXPECT_EQ(
        chat_error(
            R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"not":{}}}}})")
            .param,
        "response_format.json_schema.schema");
    EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required"})")
                  .param,
              "tool_choice");
}

TEST(OpenAIRequest, CompletionDefaultsTo16TokensAndNeedsAPrompt) {
    generate_request r;
    openai_options o;
    api_error e;
    ASSERT_TRUE(sf::parse_openai_completion(R"({"model":"m","prompt":"Once"})", r, o, e));
    EXPECT_FALSE(r.is_chat);
    EXPECT_EQ(r.prompt, "Once");
    EXPECT_EQ(r.sampling.max_tokens, 16);
    EXPECT_FALSE(sf::parse_openai_completion(R"({"model":"m"})", r, o, e));
    EXPECT_EQ(e.param, "prompt");
}

TEST(OpenAIRequest, ToolCallFieldsOfTheWrongTypeAreA400NotA500) {
    auto e = chat_error(R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,
        "tool_calls":[{"id":123,"type":"function","function":{"name":"f","arguments":"{}"}}]}]})");
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "messages[1].tool_calls");
    e = chat_error(R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":5}}]}]})");
    EXPECT_EQ(e.param, "messages[0].tool_calls");
}

TEST(OpenAIRequest, SeedsCoverTheWhole64BitRangeAndNullModelIsAbsent) {
    generate_request r;
    openai_options o;
    api_error e;
    ASSERT_TRUE(chat(R"({"model":null,"messages":[{"role":"user","content":"x"}],"seed":18446744073709551615})", r, o, e))
        << e.message;
    EXPECT_EQ(r.sampling.seed, UINT64_MAX);
    EXPECT_TRUE(r.model.empty());
    ASSERT_TRUE(chat(R"({"messages":[{"role":"user","content":"x"}],"seed":-1})", r, o, e));
    EXPECT_EQ(r.sampling.seed, UINT64_MAX);
    auto err = chat_error(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":9223372036854775807})");
    EXPECT_NE(err.message.find("from 1 to 2147483647"), std::string::npos) << err.message;
}
