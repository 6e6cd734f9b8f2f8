// Ollama's native generation API (POST /api/chat, POST /api/generate) as a generation_dialect
// (api/common/generation_dialect.h): NDJSON lines (the default) or one JSON object
// (`stream: false`), errors as {"error": "…"}; load and unload requests (no prompt) are answered
// without a session; options.num_ctx below the server's context caps the prompt and the answer.
// Durations (total, load, prompt_eval, eval) count from the request's arrival, which is when
// this object is made.
// Threads: one object per request (generation_dialect).
#pragma once

#include <chrono>
#include <memory>

#include "api/common/generation_dialect.h"
#include "api/ollama/ollama_request.h"
#include "api/ollama/ollama_stream_encoder.h"

namespace sf {

class ollama_generation final : public generation_dialect {
  public:
    /** `chat`: /api/chat; else /api/generate. */
    explicit ollama_generation(bool chat);

    api_dialect errors() const override { return api_dialect::OLLAMA; }
    bool parse(const std::string &body, generate_request &greq, api_error &err) override;
    bool ollama_names() const override { return true; }
    bool answer_without_session(const generate_request &greq, reply_body &out) override;
    api_error refusal(const start_error &se) const override;
    /** Refuses a prompt that does not fit options.num_ctx (400); sets the answer's cap. */
    bool accepted(const session &s, std::chrono::steady_clock::time_point at,
                  api_error &err) override;
    reply_mode mode() const override {
        return opts_.stream ? reply_mode::STREAM : reply_mode::WAIT;
    }
    int64_t token_limit() const override { return limit_; }
    std::unique_ptr<stream_encoder> encoder(const session &s) override;
    reply_body body(const session &s, const collected_answer &a) override;

  private:
    bool chat_;
    bool templated_ = false;  // the text goes through the chat parser (reasoning, tool calls)
    ollama_options opts_;
    ollama_stream_clock clock_;  // arrival (construction) and acceptance
    int64_t limit_ = INT64_MAX;  // options.num_ctx - prompt tokens
};

/**
 * The NDJSON stream encoder for a reader that re-attaches to an Ollama session `s` (chat or
 * generate, from its journaled API; its durations count from now).
 */
std::unique_ptr<stream_encoder> ollama_reattach_encoder(const session &s);

}  // namespace sf
