// The body of GET /v1/sessions/{id}: a session's state as JSON (Superfluid's own endpoint,
// errors in OpenAI's shape). Fields: id, object "session", api, model, created (unix s),
// status (running | completed | cancelled | failed | interrupted), finish_reason (OpenAI's
// "stop"/"length", null until finished or when it did not end normally), error, usage
// {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details.cached_tokens}, text
// (what a stream delivered so far: for chat APIs the content as the chat output parser split
// it), reasoning and tool_calls [{id, name, arguments}] (chat APIs; null when none),
// last_event_id, placements [{epoch, node, from_index, at_ms}] (where it ran: a resume after a
// lost worker or node adds one; empty without a journal).
#pragma once

#include <string>
#include <vector>

#include "core/worker_report.h"

#include "session/session.h"

namespace sf {

/**
 * `interrupted`: journaled as unfinished but not running in this process. `placements`: the
 * journal's record of its placements, by epoch.
 */
std::string session_state_body(session &s, bool interrupted,
                               const std::vector<placement_note> &placements = {});

/**
 * True for sessions of chat APIs (their streams go through the chat output parser); false
 * for prompt-style ones (openai.completion, ollama.generate).
 */
bool session_is_chat(const session &s);

}  // namespace sf
