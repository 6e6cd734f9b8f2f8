// Anthropic's stream encoder (api/common/stream_encoder.h): typed SSE events (`event: <type>`,
// `data: <json>`) as anthropic_stream (api/anthropic/anthropic_response.h) makes them from the chat
// output parser's deltas, with `id: <session>:<index>` on the last event a token completes.
// message_start waits for the first token (it carries the prefix cache's count, so its usage is
// already final, as Anthropic's is); a long prefill gets it earlier from idle(), then pings.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/anthropic/anthropic_response.h"
#include "api/common/stream_encoder.h"
#include "chat/output_parser.h"

namespace sf {

class anthropic_stream_encoder final : public stream_encoder {
  public:
    /**
     * `meta`: the message's id, model and prompt count. `parser`: the chat output parser (never
     * null). `client_stops`: the request's stop_sequences (stop_reason "stop_sequence" names
     * the one that matched). `shutting_down`: a failed end is reported as 503 (try again), not
     * 500.
     */
    anthropic_stream_encoder(anthropic_meta meta, std::unique_ptr<chat_output_parser> parser,
                             std::vector<std::string> client_stops, bool shutting_down);

    const char *content_type() const override { return "text/event-stream"; }
    std::string open(bool resumed) override;
    void skip(const session_event &token) override;
    std::string token(const session_event &token, const std::string &id) override;
    std::string finish(const session_event &fin, const std::string &id) override;
    std::string idle() override;

  private:
    std::unique_ptr<chat_output_parser> parser_;
    anthropic_stream events_;
    std::vector<std::string> stops_;
    bool shutting_down_ = false;
    bool started_       = false;  // message_start made (or seen by a re-attached reader)
};

/**
 * What an Anthropic session journals for its later readers (generate_request::client_meta):
 * {"stop_sequences":[…]} ("" when there are none).
 */
std::string anthropic_client_meta(const std::vector<std::string> &stop_sequences);
/** The stop_sequences in a session's client_meta (empty when none or unreadable). */
std::vector<std::string> anthropic_stop_sequences(const std::string &client_meta);

}  // namespace sf
