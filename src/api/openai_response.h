// Builds OpenAI response bodies and stream chunks from session events (API reference:
// "The chat completion object", "The chat completion chunk object", "The completion object").
// Every string is sanitized to valid UTF-8 on output.
#pragma once

#include <cstdint>
#include <string>

#include "scheduler/types.h"

namespace sf {

/** What a response carries besides text: identity and token counts. */
struct openai_meta {
    std::string id;  // "chatcmpl-…" / "cmpl-…"
    std::string model;
    int64_t created           = 0;  // unix seconds
    int32_t prompt_tokens     = 0;
    int32_t completion_tokens = 0;
    int32_t cached_tokens     = 0;
};

/** "stop" | "length" for a finish reason (cancel/error map to "stop"; errors are sent apart). */
const char *openai_finish_reason(finish_reason r);

/** Non-streaming chat.completion body. */
std::string openai_chat_response(const openai_meta &m, const std::string &text,
                                 finish_reason reason);
/** Non-streaming text_completion body. */
std::string openai_completion_response(const openai_meta &m, const std::string &text,
                                       finish_reason reason);

/**
 * One chat.completion.chunk JSON. `role_chunk`: the first chunk (delta has the role);
 * `reason`: set on the last content chunk; `usage_only`: the final usage chunk (empty choices).
 */
std::string openai_chat_chunk(const openai_meta &m, const std::string *text, bool role_chunk,
                              const finish_reason *reason, bool usage_only);
/** One streamed text_completion JSON. */
std::string openai_completion_chunk(const openai_meta &m, const std::string *text,
                                    const finish_reason *reason, bool usage_only);

}  // namespace sf
