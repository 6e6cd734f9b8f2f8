// Helpers every API route shares: reading a body whatever its Content-Type, noticing a client
// that went away, the request's priority class, cancelling a session and waiting for its end.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "api/common/api_error.h"
#include "api/common/priority.h"
#include "session/session_manager.h"

namespace httplib {
struct Request;
struct Response;
class DataSink;
}  // namespace httplib

namespace sf {

/**
 * Reads the whole body through a content reader, so httplib applies no form-urlencoded
 * parsing to it: bodies are JSON whatever Content-Type the client sent. False when it exceeds
 * `max_bytes` (answer 413).
 */
template <class Reader>
bool read_body(const Reader &reader, size_t max_bytes, std::string &body) {
    bool too_large = false;
    reader([&](const char *data, size_t len) {
        if (body.size() + len > max_bytes) {
            too_large = true;
            return false;
        }
        body.append(data, len);
        return true;
    });
    return !too_large;
}

/**
 * True when the client went away. Checked on a clock (every 100 ms), not only when idle: a
 * session that keeps producing tokens must notice a gone client too (writes may still succeed
 * for a while into the socket buffer).
 */
bool client_gone(const httplib::Request &req, std::chrono::steady_clock::time_point &last_check);

/**
 * Resolves the request's priority class (api/common/priority.h: body, headers, key, rules) into
 * `greq.cls` and echoes it in X-Superfluid-Priority; copies the User-Agent into
 * `greq.user_agent` and the client's identity (api/common/client_identity.h, keyed with `secret`)
 * into `greq.client`, and logs the request (method, path, class, model, User-Agent). False with
 * `err` for a bad header value.
 */
bool apply_priority(const httplib::Request &req, const priority_config &cfg,
                    const std::string &secret, generate_request &greq, httplib::Response &res,
                    api_error &err);

/** The headers api/common/priority.h reads. */
priority_headers priority_headers_of(const httplib::Request &req);

/**
 * Cancels `s` and waits until its end is journaled (the worker stops within a tick; at most
 * 30 s). Returns at once when it already finished.
 */
void cancel_and_wait(session &s);

/** Writes one SSE frame: optional `event:` line, then `data:`. False when the client left. */
bool write_sse_event(httplib::DataSink &sink, const std::string &event, const std::string &data);

}  // namespace sf
