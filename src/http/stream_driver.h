// The one generation driver for streamed answers: reads a session's events from a cursor,
// hands them to the dialect's encoder (api/common/stream_encoder.h) and writes what it returns,
// with keep-alive bytes during a long silence, client-disconnect detection and the cancel it
// implies. Every streaming dialect that goes through it, and every re-attached reader
// (http/session_routes.h), is served the same way.
// Threads: the state lives in the response's content provider, called by the request thread
// that serves the connection; the session is read under its own lock (session.h).
#pragma once

#include <memory>

#include "api/common/stream_encoder.h"
#include "session/session.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace sf {

/**
 * Answers `req` with `s`'s events from token index `cursor` on, encoded by `enc`. `cursor` 0
 * is a reader from the start; a larger one re-attached after the token cursor - 1, and the
 * encoder first catches up (skip()) on the tokens before it. `cancel_on_disconnect`: a client
 * that goes away, or a stream that ends before the session did, cancels the generation (the
 * creating request unless detached; never a re-attached reader).
 */
void serve_session_stream(const httplib::Request &req, httplib::Response &res,
                          std::shared_ptr<session> s, std::unique_ptr<stream_encoder> enc,
                          size_t cursor, bool cancel_on_disconnect);

}  // namespace sf
