// Unit tests of the dialect objects behind the one generation handler
// (api/common/generation_dialect.h): parse, the reply mode, the hooks a dialect adds (Ollama's
// load requests and options.num_ctx cap, Responses' background), refusals in each API's status
// and the non-streamed body from a collected answer. No server: a session object filled by hand.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/anthropic/anthropic_dialect.h"
#include "api/ollama/ollama_dialect.h"
#include "api/openai/openai_dialect.h"
#include "api/responses/responses_dialect.h"

using namespace sf;
using json = nlohmann::json;

namespace {

collected_answer answer(const std::string &text, std::vector<token_id> toks, finish_reason r) {
    collected_answer a;
    a.text                  = text;
    a.tokens                = std::move(toks);
    a.fin.type              = session_event::kind::FINISHED;
    a.fin.reason            = r;
    a.fin.completion_tokens = static_cast<int32_t>(a.tokens.size());
    a.first_token           = std::chrono::steady_clock::now();
    return a;
}

start_error overloaded() {
    start_error e;
    e.type    = start_error::kind::OVERLOADED;
    e.message = "the interactive queue is full";
    return e;
}

}  // namespace

TEST(GenerationDialect, OpenAICompletionParsesAndWritesItsBody) {
    openai_generation d(false);
    generate_request greq;
    api_error err;
    ASSERT_TRUE(d.parse(R"({"prompt":"Once","max_tokens":3})", greq, err)) << err.message;
    EXPECT_EQ(d.mode(), reply_mode::WAIT);
    EXPECT_TRUE(d.cancel_on_disconnect());
    EXPECT_EQ(d.token_limit(), INT64_MAX);
    session s("sess-0123456789abcdef", "tiny", 4, 0);
    const auto b = d.body(s, answer(" upon a", {11, 12, 13}, finish_reason::LENGTH));
    const auto j = json::parse(b.body);
    EXPECT_EQ(j["id"], "cmpl-sess-0123456789abcdef");
    EXPECT_EQ(j["choices"][0]["text"], " upon a");
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(j["usage"]["completion_tokens"], 3);
    EXPECT_EQ(j["usage"]["prompt_tokens"], 4);

    openai_generation streamed(true);
    ASSERT_TRUE(streamed.parse(R"({"messages":[{"role":"user","content":"hi"}],"stream":true})",
                               greq, err));
    EXPECT_EQ(streamed.mode(), reply_mode::STREAM);
    EXPECT_STREQ(streamed.encoder(s)->content_type(), "text/event-stream");
    EXPECT_EQ(streamed.refusal(overloaded()).status, 429);
}

TEST(GenerationDialect, OpenAIBadBodyIsA400) {
    openai_generation d(true);
    generate_request greq;
    api_error err;
    EXPECT_FALSE(d.parse(R"({"messages":"not a list"})", greq, err));
    EXPECT_EQ(err.status, 400);
    EXPECT_EQ(d.errors(), api_dialect::OPENAI);
}

TEST(GenerationDialect, AnthropicJournalsItsApiAndRefusesAnOverloadWith529) {
    anthropic_generation d(false, false);
    generate_request greq;
    api_error err;
    ASSERT_TRUE(d.parse(R"({"model":"claude","max_tokens":8,"stop_sequences":["END"],)"
                        R"("messages":[{"role":"user","content":"hi"}]})",
                        greq, err))
        << err.message;
    EXPECT_EQ(greq.api, "anthropic.messages");
    EXPECT_NE(greq.client_meta.find("END"), std::string::npos) << greq.client_meta;
    EXPECT_EQ(d.errors(), api_dialect::ANTHROPIC);
    EXPECT_EQ(d.refusal(overloaded()).status, 529);
    EXPECT_EQ(d.mode(), reply_mode::WAIT);
}

TEST(GenerationDialect, OllamaLoadRequestIsAnsweredWithoutASession) {
    ollama_generation d(true);
    generate_request greq;
    api_error err;
    ASSERT_TRUE(d.parse(R"({"model":"tiny"})", greq, err)) << err.message;
    reply_body out;
    ASSERT_TRUE(d.answer_without_session(greq, out));
    EXPECT_EQ(out.content_type, "application/x-ndjson");  // stream defaults to true
    const auto j = json::parse(out.body);
    EXPECT_EQ(j["done_reason"], "load");
    EXPECT_EQ(j["done"], true);

    ollama_generation chat(true);
    ASSERT_TRUE(
        chat.parse(R"({"model":"tiny","messages":[{"role":"user","content":"hi"}]})", greq, err));
    EXPECT_FALSE(chat.answer_without_session(greq, out));
    EXPECT_EQ(chat.errors(), api_dialect::OLLAMA);
    EXPECT_EQ(chat.refusal(overloaded()).status, 503);  // Ollama's "server busy"
}

TEST(GenerationDialect, OllamaNumCtxRefusesALongPromptAndCapsTheAnswer) {
    ollama_generation d(false);
    generate_request greq;
    api_error err;
    ASSERT_TRUE(d.parse(R"({"model":"tiny","prompt":"hi","raw":true,"stream":false,)"
                        R"("options":{"num_ctx":6}})",
                        greq, err))
        << err.message;
    EXPECT_EQ(greq.api, "ollama.generate");
    session too_long("sess-0123456789abcdef", "tiny", 6, 0);
    EXPECT_FALSE(d.accepted(too_long, std::chrono::steady_clock::now(), err));
    EXPECT_EQ(err.status, 400);
    EXPECT_NE(err.message.find("options.num_ctx"), std::string::npos) << err.message;

    session s("sess-0123456789abcdef", "tiny", 4, 0);
    s.set_prompt_token_ids({1, 2, 3, 4});
    ASSERT_TRUE(d.accepted(s, std::chrono::steady_clock::now(), err));
    EXPECT_EQ(d.token_limit(), 2);
    EXPECT_EQ(d.mode(), reply_mode::WAIT);
    const auto j = json::parse(d.body(s, answer("ab", {7, 8}, finish_reason::LENGTH)).body);
    EXPECT_EQ(j["response"], "ab");
    EXPECT_EQ(j["done_reason"], "length");
    EXPECT_EQ(j["eval_count"], 2);
    EXPECT_EQ(j["context"], json::array({1, 2, 3, 4, 7, 8}));  // prompt, then the answer
}

TEST(GenerationDialect, ResponsesBackgroundNeedsTheJournalAndOutlivesItsClient) {
    const std::string body = R"({"input":"hi","background":true})";
    generate_request greq;
    api_error err;
    responses_generation unjournaled(false);
    EXPECT_FALSE(unjournaled.parse(body, greq, err));
    EXPECT_EQ(err.status, 400);
    EXPECT_EQ(err.param, "background");

    responses_generation d(true);
    ASSERT_TRUE(d.parse(body, greq, err)) << err.message;
    EXPECT_EQ(greq.api, "openai.responses");
    EXPECT_EQ(json::parse(greq.client_meta)["background"], true);
    EXPECT_EQ(d.mode(), reply_mode::AT_ONCE);
    EXPECT_FALSE(d.cancel_on_disconnect());

    session_event cancelled;
    cancelled.reason = finish_reason::CANCELLED;
    EXPECT_EQ(d.failed(cancelled, false).message, "the response was cancelled");
    EXPECT_EQ(d.failed(cancelled, true).status, 503);
}
