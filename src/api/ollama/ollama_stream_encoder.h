// Ollama's stream encoder (api/common/stream_encoder.h): NDJSON lines of /api/chat and
// /api/generate (api/ollama/ollama_response.h), one line per generated token (its text, reasoning
// or nothing yet while the chat parser holds back markup), then the final `done` line with Ollama's
// counters. NDJSON carries no event ids: a reader that has read k token lines re-attaches after
// token k - 1 (GET /v1/sessions/{id}/events with `Last-Event-ID: <session>:<k-1>`) and gets exactly
// the lines it is missing. options.num_ctx below the server's context caps the answer here:
// after `limit` tokens the encoder writes the end ("length") itself and ended() tells the
// driver to stop (and cancel the generation).
// Pure but for the injected clock (durations of the final line) and created_at's wall time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/common/stream_encoder.h"
#include "api/ollama/ollama_response.h"
#include "chat/output_parser.h"

namespace sf {

/** What the lines of one Ollama answer say about it. */
struct ollama_stream_meta {
    std::string model;
    bool chat             = true;  // /api/chat lines (message) or /api/generate (response)
    int32_t prompt_tokens = 0;
    // generate: the start of the final `context` (empty when the head no longer holds them: a
    // reader of a journaled session gets no `context`)
    std::vector<token_id> prompt_token_ids;
    int64_t limit = std::numeric_limits<int64_t>::max();  // tokens before "length" (num_ctx)
};

/** The clocks of the final line's durations: arrival, acceptance, and "now". */
struct ollama_stream_clock {
    using time_point = std::chrono::steady_clock::time_point;
    time_point start, accepted;
    std::function<time_point()> now = [] { return std::chrono::steady_clock::now(); };
};

/**
 * eval_count of a finished answer, counted as Ollama counts it: every token sampled, the
 * end-of-generation token included (Ollama's runner counts a token before it checks for the
 * end, so an answer that ends at once reports 1). Clients read a count of 0 as a backend that
 * produced nothing (OpenClaw then gives up on an empty turn instead of retrying it).
 */
int32_t ollama_eval_count(const session_event &fin);

/**
 * The final line's durations and counts, as Ollama reports them: total, load (arrival →
 * accepted), prompt_eval (accepted → `first`, the first token; until now when none came yet)
 * and eval (first token → now), from `clock`; prompt_eval_count counts only the prompt tokens
 * evaluated (the prefix cache supplied `cached_tokens` of them).
 */
ollama_stats ollama_answer_stats(const ollama_stream_clock &clock,
                                 std::optional<ollama_stream_clock::time_point> first,
                                 int32_t prompt_tokens, int32_t cached_tokens,
                                 int32_t completion_tokens);

/**
 * Text released by the model as Ollama sends it: through the chat layer's `parser` (null for a
 * raw or untemplated request: all of it is content) into thinking and content; `final` also
 * flushes the parser and adds the whole tool calls (arguments as an object), which Ollama sends
 * once the answer is complete. Shared by the stream encoder and the non-streamed body.
 */
ollama_delta ollama_split(chat_output_parser *parser, const std::string &text, bool final);

class ollama_stream_encoder final : public stream_encoder {
  public:
    /** `parser`: the chat output parser of a templated request (reasoning, tool calls), or null. */
    ollama_stream_encoder(ollama_stream_meta meta, std::unique_ptr<chat_output_parser> parser,
                          ollama_stream_clock clock);

    const char *content_type() const override { return "application/x-ndjson"; }
    std::string open(bool) override { return ""; }
    void skip(const session_event &token) override;
    std::string token(const session_event &token, const std::string &id) override;
    std::string finish(const session_event &fin, const std::string &id) override;
    bool ended() const override { return ended_; }

  private:
    ollama_delta take(const std::string &text, bool final);
    std::string line(const ollama_delta &d, const ollama_done *done) const;
    std::string done_line(const std::string &reason, int32_t completion_tokens,
                          int32_t cached_tokens);

    ollama_stream_meta meta_;
    std::unique_ptr<chat_output_parser> parser_;
    ollama_stream_clock clock_;
    int64_t count_  = 0;  // token events seen
    int32_t cached_ = 0;  // prompt tokens the prefix cache supplied (first token's)
    bool got_first_ = false;
    ollama_stream_clock::time_point first_;
    std::vector<token_id> generated_;  // generate: the answer's tokens for `context`
    bool ended_ = false;
};

/**
 * What an Ollama session journals for its later readers (generate_request::client_meta):
 * {"raw":true} for a request whose answer is not parsed (generate with `raw`, or a model
 * without a template), "" for a templated one.
 */
std::string ollama_client_meta(bool templated);
/** Whether a session's answer goes through the chat output parser (from its client_meta). */
bool ollama_templated(const std::string &client_meta);

/** The id prefix of an Ollama session's tool calls ("call_<session>_"; the index follows). */
inline std::string ollama_tool_call_prefix(const std::string &session_id) {
    return "call_" + session_id + "_";
}

}  // namespace sf
