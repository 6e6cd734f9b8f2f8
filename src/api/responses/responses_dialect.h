// OpenAI's Responses API (POST /v1/responses) as a generation_dialect
// (api/common/generation_dialect.h): typed SSE events with sequence numbers, one response object,
// or, with `background: true`, the object at once while the generation runs on with no client.
// What the response object repeats (instructions, tools, background, store) is journaled with
// the request, so any reader rebuilds the same object (api/responses/responses_run.h).
// Threads: one object per request (generation_dialect).
#pragma once

#include <memory>

#include "api/common/generation_dialect.h"
#include "api/responses/responses_request.h"

namespace sf {

class responses_generation final : public generation_dialect {
  public:
    /** `journaled`: the server keeps a token journal (background and store need it). */
    explicit responses_generation(bool journaled) : journaled_(journaled) {}

    api_dialect errors() const override { return api_dialect::OPENAI; }
    /** Also refuses `background: true` without the journal (400 unsupported_parameter). */
    bool parse(const std::string &body, generate_request &greq, api_error &err) override;
    api_error refusal(const start_error &se) const override;
    reply_mode mode() const override;
    bool cancel_on_disconnect() const override { return !opts_.background; }
    std::unique_ptr<stream_encoder> encoder(const session &s) override;
    /** The response object (at once: queued or in progress; else completed, incomplete). */
    reply_body body(const session &s, const collected_answer &a) override;
    /** From the response object: its error message, or "the response was cancelled". */
    api_error failed(const session_event &fin, bool shutting_down) const override;

  private:
    bool journaled_;
    responses_options opts_;
};

}  // namespace sf
