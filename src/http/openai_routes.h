// OpenAI generation endpoints: POST /v1/chat/completions and POST /v1/completions, streamed
// (SSE, `data: [DONE]`) or not. A client that disconnects cancels its session.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/common/priority.h"
#include "api/openai/openai_response.h"
#include "http/session_access.h"
#include "session/session_manager.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace sf {

class http_router;

/** What the OpenAI routes need from the server. */
struct openai_route_context {
    session_manager *sessions = nullptr;
    std::function<bool(const std::string &)> model_ok;  // is `name` the model served here?
    std::string model_id;
    size_t max_body_bytes = 32u << 20;  // larger bodies: 413
    priority_config priority;           // classes from headers/keys/rules

    // Model names (http/model_names.h): the store's pulled models, strict names.
    std::string state_dir;            // the model store's index ("" = none)
    bool strict_model_names = false;  // unknown names: 404, not the served model
    std::string identity_secret;      // keys client ids (api/common/client_identity.h)
    // Who may see and use which session (http/session_access.h). Keys in use (keyed()): every
    // caller of a listing holds one, so /api/ps and /api/show give the model's absolute path and
    // the worker's pid (without keys: the file name, no pid).
    std::shared_ptr<const session_access> access = std::make_shared<const session_access>();
};

/** Identity of `s`'s OpenAI response: chatcmpl-/cmpl- id, model, created, prompt counts. */
openai_meta openai_session_meta(const session &s, bool chat);

/**
 * Streams session `s` as OpenAI SSE (chat or text-completion chunks, `data: [DONE]` last) from
 * token index `cursor` on; each chunk carries `id: <session>:<index>`. `cursor` 0 starts with
 * the role chunk; a larger one is a re-attached reader (http/session_routes.h).
 * `cancel_on_disconnect`: the client going away cancels the generation (the original request).
 */
void stream_openai_session(const httplib::Request &req, httplib::Response &res,
                           std::shared_ptr<session> s, const openai_meta &meta, bool chat,
                           bool include_usage, size_t cursor, bool cancel_on_disconnect);

/** Registers the routes. Bodies are read whatever their Content-Type. */
void register_openai_routes(http_router &svr, openai_route_context ctx);

}  // namespace sf
