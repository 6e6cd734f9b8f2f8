// Which browser requests the head serves (issue #38): a web page the user opens must not drive
// the API (Ollama CVE-2024-28224 was DNS rebinding; the head answered any Origin with
// Access-Control-Allow-Origin: *). Checked in admission's pre-routing handler, before keys:
//   Host     while bound to a loopback address, the Host header must name loopback
//            (localhost, *.localhost, 127.0.0.0/8, [::1]) or an --allowed-host: a DNS-rebound
//            name (evil.example resolving to 127.0.0.1) is refused with 403.
//   Origin   a request that carries one (browsers send it on cross-origin requests and on every
//            POST) is served only for the server's own origin (the /ui page), loopback origins
//            (a local web UI on another port, as Ollama allows by default) and --cors-origin
//            ones ("*": any); others get 403, preflights included, and no CORS headers.
//   Content  a browser's POST/PUT/DELETE whose Content-Type is one a page may send without a
//            preflight (text/plain, form encodings) is refused with 415: the API takes JSON.
// Clients that are not browsers (SDKs, curl, agents) send no Origin and are unaffected.
// Plain data, read-only after start: any request thread may call it.
#pragma once

#include <string>
#include <vector>

#include "api/common/api_error.h"

namespace httplib {
struct Request;
}

namespace sf {

struct origin_policy {
    std::string bind_host = "127.0.0.1";     // the address the server listens on
    std::vector<std::string> cors_origins;   // --cors-origin: "scheme://host[:port]" or "*"
    std::vector<std::string> allowed_hosts;  // --allowed-host: Host names served (no port)

    /** True when `host` ("name", "name:port", "[v6]:port" or empty) may be served. */
    bool host_allowed(const std::string &host) const;
    /**
     * True when a page of `origin` may call the API; `own_host` is the request's Host header
     * (the origin of a page the server itself served, such as /ui, is "http://" + own_host).
     */
    bool origin_allowed(const std::string &origin, const std::string &own_host) const;
};

/**
 * True when a body follows the request's headers (Content-Length > 0 or chunked): what
 * pre-routing, which runs before the body is read, can know of it.
 */
bool request_has_body(const httplib::Request &req);

/** True for addresses only this machine reaches: localhost, 127.0.0.0/8, ::1. */
bool is_loopback_host(const std::string &host);

/**
 * The check for one request: an error (403 or 415, with a message that names the flag that
 * allows it) or status 0 when it may be served.
 */
api_error check_browser_request(const origin_policy &p, const httplib::Request &req);

}  // namespace sf
