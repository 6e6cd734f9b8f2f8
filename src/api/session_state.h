// The body of GET /v1/sessions/{id}: a session's state as JSON (Superfluid's own endpoint,
// errors in OpenAI's shape). Fields: id, object "session", api, model, created (unix s),
// status (running | completed | cancelled | failed | interrupted), finish_reason (OpenAI's
// "stop"/"length", null until finished or when it did not end normally), error, usage
// {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details.cached_tokens}, text
// (what a stream delivered so far: for chat APIs the content as the chat output parser split
// it), reasoning and tool_calls [{id, name, arguments}] (chat APIs; null when none),
// last_event_id.
#pragma once

#include <string>

#include "session/session.h"

namespace sf {

/** `interrupted`: journaled as unfinished but not running in this process. */
std::string session_state_body(session &s, bool interrupted);

/**
 * True for sessions of chat APIs (their streams go through the chat output parser); false
 * for prompt-style ones (openai.completion, ollama.generate).
 */
bool session_is_chat(const session &s);

}  // namespace sf
