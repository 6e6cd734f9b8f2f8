// Builds OpenAI response bodies and stream chunks from session events (API reference:
// "The chat completion object", "The chat completion chunk object", "The completion object").
// Every string is sanitized to valid UTF-8 on output.
#pragma once

#include <cstdint>
#include <string>

#include "chat/output_parser.h"
#include "core/session_event.h"

namespace sf {

/** What a response carries besides text: identity and token counts. */
struct openai_meta {
    std::string id;  // "chatcmpl-…" / "cmpl-…"
    std::string model;
    int64_t created           = 0;  // unix seconds
    int32_t prompt_tokens     = 0;
    int32_t completion_tokens = 0;
    int32_t cached_tokens     = 0;
    // Speculative decoding, when the session drafted: top-level "timings": {draft_n,
    // draft_n_accepted}, llama-server's names for the same counts.
    int32_t draft_tokens   = 0;
    int32_t draft_accepted = 0;
};

/** "stop" | "length" for a finish reason (cancel/error map to "stop"; errors are sent apart). */
const char *openai_finish_reason(finish_reason r);

/** Non-streaming text_completion body. */
std::string openai_completion_response(const openai_meta &m, const std::string &text,
                                       finish_reason reason);

/**
 * One chat.completion.chunk JSON. `role_chunk`: the first chunk (delta has the role);
 * `reason`: set on the last content chunk; `usage_only`: the final usage chunk (empty choices).
 */
std::string openai_chat_chunk(const openai_meta &m, const std::string *text, bool role_chunk,
                              const finish_reason *reason, bool usage_only);
/** "tool_calls" when the answer called tools and ended normally, else openai_finish_reason. */
const char *openai_chat_finish_reason(finish_reason r, bool has_tool_calls);

/**
 * Non-streaming chat.completion body of a parsed answer: message.content (null when only tools
 * were called), message.reasoning_content (when the model reasoned), message.tool_calls.
 */
std::string openai_chat_message_response(const openai_meta &m, const parsed_message &msg,
                                         const char *finish);

/**
 * A chat.completion.chunk carrying one parser delta: content, reasoning_content, or a
 * tool_calls entry — {index, id, type, function: {name, arguments: ""}} to start a call,
 * {index, function: {arguments}} for argument text (OpenAI's streamed tool-call shape).
 */
std::string openai_chat_delta_chunk(const openai_meta &m, const chat_delta &d);

/** The chunk that ends a choice: empty delta, finish_reason `finish`. */
std::string openai_chat_finish_chunk(const openai_meta &m, const char *finish);

/** One streamed text_completion JSON. */
std::string openai_completion_chunk(const openai_meta &m, const std::string *text,
                                    const finish_reason *reason, bool usage_only);

}  // namespace sf
