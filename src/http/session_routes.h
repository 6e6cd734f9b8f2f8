// Superfluid's session endpoints (journal-backed, docs/ARCHITECTURE.md "Journal"):
//   GET /v1/sessions/{id}         state, finish reason, token counts, text so far
//   GET /v1/sessions/{id}/events  re-attach: SSE from the journal, then live, ending [DONE];
//                                 resumes after `Last-Event-ID` or `?after=N`;
//                                 `?include_usage=true` adds the usage chunk.
//   POST /v1/sessions/{id}/cancel cancels a running session (e.g. one started with
//                                 X-Superfluid-Detach) and answers its state; a finished
//                                 one's state is answered unchanged.
// Unknown ids are a 404 in OpenAI's error shape, and so is a session the caller may not use
// (http/session_access.h: with keys, one made with another key, unless an admin key).
#pragma once

#include <memory>

#include "http/session_access.h"
#include "session/session_manager.h"

namespace sf {

class http_router;

/** Registers the routes; `sessions` must outlive the server; `access`: who may use a session. */
void register_session_routes(http_router &svr, session_manager &sessions,
                             std::shared_ptr<const session_access> access);

}  // namespace sf
