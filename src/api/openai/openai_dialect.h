// OpenAI's chat completions (POST /v1/chat/completions) and text completions
// (POST /v1/completions) as a generation_dialect (api/common/generation_dialect.h): chunks over
// SSE ending in `data: [DONE]`, or one chat.completion / text_completion object.
// Threads: one object per request (generation_dialect).
#pragma once

#include <memory>

#include "api/common/generation_dialect.h"
#include "api/openai/openai_request.h"
#include "api/openai/openai_response.h"

namespace sf {

class openai_generation final : public generation_dialect {
  public:
    /** `chat`: a chat completion; else a text completion. */
    explicit openai_generation(bool chat) : chat_(chat) {}

    api_dialect errors() const override { return api_dialect::OPENAI; }
    bool parse(const std::string &body, generate_request &greq, api_error &err) override;
    api_error refusal(const start_error &se) const override;
    reply_mode mode() const override {
        return opts_.stream ? reply_mode::STREAM : reply_mode::WAIT;
    }
    std::unique_ptr<stream_encoder> encoder(const session &s) override;
    reply_body body(const session &s, const collected_answer &a) override;

  private:
    bool chat_;
    openai_options opts_;
};

/** Identity of `s`'s OpenAI response: chatcmpl-/cmpl- id, model, created, prompt counts. */
openai_meta openai_session_meta(const session &s, bool chat);

/**
 * The OpenAI stream encoder of session `s`: chat chunks (`chat`) or text-completion chunks, the
 * usage chunk when `include_usage`. The creating request's, and a re-attached reader's for any
 * session whose API has no stream of its own (http/session_routes.h).
 */
std::unique_ptr<stream_encoder> openai_session_encoder(const session &s, bool chat,
                                                       bool include_usage);

}  // namespace sf
