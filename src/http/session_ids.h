// Session ids on the wire, shared by every API adapter (OpenAI, Anthropic, Ollama, …):
// the `X-Superfluid-Session` response header of generation endpoints and the SSE event ids
// (`id: <session>:<index>`) that let a client re-attach with Last-Event-ID
// (GET /v1/sessions/{id}/events, http/session_routes.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace sf {

/** The response header naming the session of a generation request. */
inline constexpr const char *k_session_header = "X-Superfluid-Session";

/**
 * The request header `X-Superfluid-Detach: true`: a streamed generation keeps running when its
 * client goes away (the /ui chat pane: a reload re-attaches); POST /v1/sessions/{id}/cancel
 * stops it.
 */
inline constexpr const char *k_detach_header = "X-Superfluid-Detach";

/** True when the request asks for a detached session (`X-Superfluid-Detach: true` or `1`). */
bool wants_detach(const httplib::Request &req);

/** Sets `X-Superfluid-Session: <id>` (call on every generation endpoint, before streaming). */
void set_session_header(httplib::Response &res, const std::string &session_id);

/**
 * The SSE event id of a session's event `index`: "<session>:<index>". Token events use their
 * token index; the final chunk uses the completion-token count (one past the last token).
 */
std::string sse_event_id(const std::string &session_id, size_t index);

/**
 * Where a re-attaching reader of `session_id` resumes: one past the index in `Last-Event-ID`
 * ("<session>:<n>" or "<n>") or in the query `?after=N`; 0 (from the start) when neither is
 * given. False with `error` set when the value is malformed or names another session.
 */
bool resume_cursor(const httplib::Request &req, const std::string &session_id, size_t &cursor,
                   std::string &error);

/**
 * `?starting_after=N` of GET /v1/responses/{id}?stream=true: a non-negative decimal integer
 * (a sequence_number), digits only. False, `after` untouched, when malformed or out of range.
 */
bool parse_starting_after(const std::string &value, int64_t &after);

}  // namespace sf
