// Builds Ollama native response bodies (github.com/ollama/ollama docs/api.md): NDJSON lines of
// /api/chat and /api/generate, the final `done` line with its counters (durations in
// nanoseconds), errors ({"error": "…"}), and the model listings (/api/tags, /api/show,
// /api/ps). Strings are sanitized to valid UTF-8 on output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/common/api_error.h"
#include "core/chat.h"
#include "core/sampling.h"
#include "core/submit_result.h"
#include "core/token.h"

namespace sf {

/** What one line adds: text, reasoning, tool calls (arguments are JSON text). */
struct ollama_delta {
    std::string content;
    std::string thinking;
    std::vector<tool_call> tool_calls;
};

/** The counters of the final line. Durations in nanoseconds. */
struct ollama_stats {
    int64_t total_ns          = 0;
    int64_t load_ns           = 0;  // request arrival → the worker accepted it (queue, template)
    int64_t prompt_eval_ns    = 0;  // accepted → first generated token
    int64_t eval_ns           = 0;  // first → last generated token
    int32_t prompt_eval_count = 0;
    int32_t eval_count        = 0;
};

/** The end of an answer: done_reason ("stop", "length", "load", "unload") and counters. */
struct ollama_done {
    std::string reason;
    ollama_stats stats;
    bool with_stats                      = true;     // load/unload lines carry none
    const std::vector<token_id> *context = nullptr;  // generate: prompt + answer tokens
};

/** One /api/chat line (no trailing newline); `done` set on the last one. */
std::string ollama_chat_line(const std::string &model, const ollama_delta &d,
                             const ollama_done *done);
/** One /api/generate line (no trailing newline); `done` set on the last one. */
std::string ollama_generate_line(const std::string &model, const ollama_delta &d,
                                 const ollama_done *done);
/** {"error": message}. */
std::string ollama_error_body(const std::string &message);

/**
 * The HTTP status of a session that could not start, as Ollama answers it: a full queue is 503
 * (OLLAMA_MAX_QUEUE; Ollama's FAQ, PR #4144), not 429; otherwise as refusal_status.
 */
int ollama_refusal_status(const start_error &se);

/** RFC 3339 UTC time with nanoseconds (Ollama's created_at). */
std::string ollama_timestamp();

}  // namespace sf
