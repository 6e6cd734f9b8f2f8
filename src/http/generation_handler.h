// The one generation handler (issue #39): every API's generation request takes the same path
// here, whatever its dialect (api/common/generation_dialect.h): read the body (413 over the
// limit), parse it, resolve the priority class (api/common/priority.h) and the model name
// (http/model_names.h), start the session, then either the dialect's stream through the
// generation driver (http/stream_driver.h) or, once the session ended, its one body. Every
// error before the first response byte is in the dialect's shape.
// Threads: each request runs on the request thread that serves its connection; the route
// context is shared read-only.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/common/generation_dialect.h"
#include "http/route_context.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace sf {

class http_router;

/** A fresh dialect object for one request (it keeps that request's options). */
using dialect_factory = std::function<std::unique_ptr<generation_dialect>(const route_context &)>;

/**
 * Registers POST `pattern`: the JSON body is read whatever its Content-Type (over
 * `rc->max_body_bytes`: 413 in `errors`' shape), then `fn` answers it.
 */
void register_body_route(
    http_router &svr, const std::string &pattern, std::shared_ptr<const route_context> rc,
    api_dialect errors,
    std::function<void(const httplib::Request &, const std::string &, httplib::Response &)> fn);

/** Registers POST `pattern` as a generation route: serve_generation with `make(*rc)`. */
void register_generation_route(http_router &svr, const std::string &pattern,
                               std::shared_ptr<const route_context> rc, dialect_factory make);

/**
 * Parses `body` with `d` into `greq`, then resolves the priority class (echoed in
 * X-Superfluid-Priority) and the model name into it. False when `res` holds the error (400 bad
 * body or header, 404 unknown model) in `d`'s shape. Also for requests that count tokens
 * instead of generating (Anthropic's count_tokens).
 */
bool prepare_generation(const httplib::Request &req, const std::string &body,
                        httplib::Response &res, const route_context &rc, generation_dialect &d,
                        generate_request &greq);

/**
 * Serves one generation request: prepare_generation, the dialect's answer without a session if
 * any, the session's start (a refusal in the dialect's status and shape, 429/503 with
 * Retry-After: 1 when overloaded), X-Superfluid-Session, then the stream or the body. A client
 * that goes away cancels the generation unless the dialect or X-Superfluid-Detach says not to.
 */
void serve_generation(const httplib::Request &req, const std::string &body, httplib::Response &res,
                      const route_context &rc, generation_dialect &d);

}  // namespace sf
