// OpenAI generation endpoints: POST /v1/chat/completions and POST /v1/completions, streamed
// (SSE, `data: [DONE]`) or not. A client that disconnects cancels its session.
#pragma once

#include <functional>
#include <string>

#include "api/priority.h"
#include "session/session_manager.h"

namespace httplib {
class Server;
}

namespace sf {

/** What the OpenAI routes need from the server. */
struct openai_route_context {
    session_manager *sessions = nullptr;
    std::function<bool(const std::string &)> model_ok;  // is `name` the model served here?
    std::string model_id;
    size_t max_body_bytes = 32u << 20;  // larger bodies: 413
    priority_config priority;           // classes from headers/keys/rules
};

/** Registers the routes. Bodies are read whatever their Content-Type. */
void register_openai_routes(httplib::Server &svr, openai_route_context ctx);

}  // namespace sf
