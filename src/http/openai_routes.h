// OpenAI generation endpoints: POST /v1/chat/completions and POST /v1/completions, streamed
// (SSE, `data: [DONE]`) or not. A client that disconnects cancels its session.
#pragma once

#include <functional>
#include <string>

#include "session/session_manager.h"

namespace httplib {
class Server;
}

namespace sf {

/**
 * Registers the routes; `model_ok(name)` says whether a requested model is served here.
 * Bodies are read whatever their Content-Type, up to `max_body_bytes` (more: 413).
 */
void register_openai_routes(httplib::Server &svr, session_manager &sessions,
                            std::function<bool(const std::string &)> model_ok, std::string model_id,
                            size_t max_body_bytes);

}  // namespace sf
