// Builds Anthropic Messages API bodies and stream events (docs.anthropic.com "Messages",
// "Streaming Messages", "Errors") from the core chat layer's parsed answers and deltas.
// Every string is sanitized to valid UTF-8 on output.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "api/common/api_error.h"
#include "chat/output_parser.h"
#include "core/session_event.h"
#include "core/submit_result.h"

namespace sf {

/**
 * Identity and counts of one response. Usage is reported with Anthropic's prompt-caching
 * semantics: input_tokens = prompt_tokens − cached_tokens (the part prefilled),
 * cache_read_input_tokens = cached_tokens, cache_creation_input_tokens = 0; the three add up
 * to the whole prompt, which is what /v1/messages/count_tokens returns.
 */
struct anthropic_meta {
    std::string id;  // "msg_…"
    std::string model;
    int32_t prompt_tokens = 0;  // the whole rendered prompt
    int32_t cached_tokens = 0;  // of those, reused from the prefix cache
    int32_t output_tokens = 0;
};

/** Anthropic error type of an HTTP status (400 invalid_request_error, 529 overloaded_error…). */
const char *anthropic_error_type(int status);
/** {"type":"error","error":{"type","message"}}. */
std::string anthropic_error_body(const api_error &e);

/**
 * A session that could not start, in Anthropic's terms: 400 (a prompt too long in Anthropic's
 * wording, "prompt is too long: N tokens > M maximum", which agents parse to compact their
 * context), 529 overloaded for a full class queue, 503, 500.
 */
api_error anthropic_refusal(const start_error &se);

/** The signature sent with thinking blocks (opaque to clients; we do not sign). */
extern const char *const k_thinking_signature;

/**
 * stop_reason of a finished turn: tool_use, max_tokens, stop_sequence (sets `stop_sequence`
 * when a client stop sequence matched) or end_turn.
 */
std::string anthropic_stop_reason(const session_event &fin, bool has_tool_calls,
                                  const std::vector<std::string> &client_stops,
                                  std::string &stop_sequence);

/** Non-streaming message body: thinking, text and tool_use blocks in that order. */
std::string anthropic_message_response(const anthropic_meta &m, const parsed_message &msg,
                                       const std::string &stop_reason,
                                       const std::string &stop_sequence);

/**
 * The event sequence of one streamed message: message_start, ping, then per block
 * content_block_start / content_block_delta / content_block_stop (one block open at a time,
 * indexes increasing; a thinking block gets its signature_delta before it closes), then
 * message_delta (stop_reason, stop_sequence, cumulative usage) and message_stop — or, on a
 * failure, the open block closed and an `error` event. Events are (name, JSON data).
 */
class anthropic_stream {
  public:
    using event = std::pair<std::string, std::string>;
    explicit anthropic_stream(anthropic_meta m) : meta_(std::move(m)) {}

    /** message_start and a ping; `cached_tokens`: prompt tokens read from the cache so far known.
     */
    std::vector<event> start(int32_t cached_tokens);
    std::vector<event> on_delta(const chat_delta &d);
    /** The end; message_delta repeats the whole usage, with the final cached count. */
    std::vector<event> finish(const std::string &stop_reason, const std::string &stop_sequence,
                              int32_t output_tokens, int32_t cached_tokens);
    std::vector<event> fail(const api_error &e);
    static event ping();

  private:
    enum class block { NONE, TEXT, THINKING, TOOL };
    void open(block b, const std::string &content_block_json, std::vector<event> &out);
    void close(std::vector<event> &out);

    anthropic_meta meta_;
    block open_      = block::NONE;
    int index_       = -1;  // index of the open (or last) block
    size_t tool_idx_ = 0;   // parser index of the open tool_use block
};

}  // namespace sf
