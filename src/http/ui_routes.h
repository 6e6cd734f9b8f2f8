// The web page (issue #22): GET /ui, one self-contained HTML page (src/http/ui/index.html,
// embedded in the binary), and GET /ui/events, Server-Sent Events carrying one status
// snapshot (api/superfluid/ui_snapshot.h) per second while the page is open. The page's chat pane
// uses the public APIs (/v1/chat/completions, /v1/sessions/{id}/events); `/` stays Ollama's.
// Threads: each open /ui/events stream holds one HTTP handler thread (at most
// kMaxUiStreams at once; more are answered 503); the snapshot source is shared by all.
#pragma once

#include <memory>
#include <string>

#include "http/session_access.h"
#include "session/session_manager.h"

namespace sf {

class http_router;

/** Most /ui/events streams open at once (each holds a request thread for its length). */
constexpr int kMaxUiStreams = 16;

/**
 * Registers /ui and /ui/events; `sessions` must outlive the server. `access`: which session ids
 * each viewer sees; with keys in use (every viewer holds one) the snapshot carries the worker's
 * pid.
 */
void register_ui_routes(http_router &svr, session_manager &sessions, const std::string &model_id,
                        std::shared_ptr<const session_access> access);

}  // namespace sf
