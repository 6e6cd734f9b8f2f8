// The OpenAI Responses API's stream encoder (api/common/stream_encoder.h): the typed SSE events
// that responses_builder (api/responses/responses_response.h) makes from the chat output parser's
// deltas, with `id: <session>:<index>` on the last event a token completes, so a reader can
// re-attach after it (GET /v1/sessions/{id}/events with Last-Event-ID) as well as with Responses'
// own `starting_after` (a sequence_number). The opening events (response.created, in_progress)
// leave at open(), before any token: OpenAI sends them at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/common/stream_encoder.h"
#include "api/responses/responses_response.h"
#include "chat/output_parser.h"

namespace sf {

/** Who a Responses answer is: what its events and object repeat (from the session). */
struct responses_meta {
    std::string id;  // "resp_<session id>"
    std::string model;
    int64_t created       = 0;                         // unix seconds
    nlohmann::json echo   = nlohmann::json::object();  // the request fields the object repeats
    int32_t prompt_tokens = 0;                         // usage.input_tokens
};

class responses_stream_encoder final : public stream_encoder {
  public:
    /**
     * `parser`: the chat output parser (never null). `skip_through`: events with
     * sequence_number <= it are made but not returned (Responses' `starting_after`; -1: none).
     */
    responses_stream_encoder(responses_meta meta, std::unique_ptr<chat_output_parser> parser,
                             int64_t skip_through = -1);

    const char *content_type() const override { return "text/event-stream"; }
    std::string open(bool resumed) override;
    void skip(const session_event &token) override;
    std::string token(const session_event &token, const std::string &id) override;
    std::string finish(const session_event &fin, const std::string &id) override;

    /**
     * The response object now: output so far and status (in_progress, then completed /
     * incomplete / cancelled / failed with usage once finish() ran).
     */
    nlohmann::json response() const { return builder_.response(); }

  private:
    std::string start();

    std::unique_ptr<chat_output_parser> parser_;
    responses_builder builder_;
    int32_t prompt_tokens_ = 0;
    bool started_          = false;
};

}  // namespace sf
