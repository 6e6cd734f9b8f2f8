// Anthropic's Messages API (POST /v1/messages) as a generation_dialect
// (api/common/generation_dialect.h): typed SSE events (message_start … message_stop) or one
// message object; errors as {"type": "error", "error": {...}}.
// Threads: one object per request (generation_dialect).
#pragma once

#include <memory>

#include "api/anthropic/anthropic_request.h"
#include "api/anthropic/anthropic_response.h"
#include "api/common/generation_dialect.h"

namespace sf {

class anthropic_generation final : public generation_dialect {
  public:
    /**
     * `count_only`: a /v1/messages/count_tokens body (no max_tokens needed, nothing generated).
     * `shutting_down`: the server is stopping, so a stream's failed end says 503.
     */
    anthropic_generation(bool count_only, bool shutting_down)
        : count_only_(count_only), shutting_down_(shutting_down) {}

    api_dialect errors() const override { return api_dialect::ANTHROPIC; }
    bool parse(const std::string &body, generate_request &greq, api_error &err) override;
    api_error refusal(const start_error &se) const override;
    reply_mode mode() const override {
        return opts_.stream ? reply_mode::STREAM : reply_mode::WAIT;
    }
    std::unique_ptr<stream_encoder> encoder(const session &s) override;
    reply_body body(const session &s, const collected_answer &a) override;

  private:
    bool count_only_;
    bool shutting_down_;
    anthropic_options opts_;
};

/** Identity of `s`'s Anthropic message: msg_ id, the model it was served as, prompt count. */
anthropic_meta anthropic_session_meta(const session &s);

/**
 * The Anthropic stream encoder of session `s` (its stop sequences from the journaled client
 * meta), for the creating request and for a reader that re-attaches. `shutting_down`: a failed
 * end is a 503 overloaded error rather than a 500.
 */
std::unique_ptr<stream_encoder> anthropic_session_encoder(const session &s, bool shutting_down);

}  // namespace sf
