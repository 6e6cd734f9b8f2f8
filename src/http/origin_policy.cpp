#include "http/origin_policy.h"

#include <cpp-httplib/httplib.h>

#include <algorithm>
#include <cctype>

namespace sf {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// The name of "name", "name:port", "[v6]" or "[v6]:port", lower-cased, brackets kept.
std::string host_name(const std::string &host) {
    if (!host.empty() && host[0] == '[') {
        const size_t close = host.find(']');
        return lower(close == std::string::npos ? host : host.substr(0, close + 1));
    }
    return lower(host.substr(0, host.find(':')));
}

bool ends_with(const std::string &s, const std::string &tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A name that always resolves to this machine: browsers resolve *.localhost themselves
// (RFC 6761), so no DNS answer can point it elsewhere.
bool loopback_name(const std::string &name) {
    return is_loopback_host(name) || ends_with(name, ".localhost");
}

// The host part of an origin "scheme://host[:port]" ("" when it has no "://").
std::string origin_host(const std::string &origin) {
    const size_t sep = origin.find("://");
    return sep == std::string::npos ? "" : host_name(origin.substr(sep + 3));
}

// The Content-Types a page may send cross-origin without a preflight (the Fetch standard's
// CORS-safelisted request header values).
bool simple_content_type(const std::string &type) {
    const std::string t = lower(type.substr(0, type.find(';')));
    return t.empty() || t == "text/plain" || t == "application/x-www-form-urlencoded" ||
           t == "multipart/form-data";
}

}  // namespace

bool request_has_body(const httplib::Request &req) {
    return req.get_header_value_u64("Content-Length") > 0 ||
           req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
}

bool is_loopback_host(const std::string &h) {
    return h == "localhost" || h.rfind("127.", 0) == 0 || h == "::1" || h == "[::1]";
}

bool origin_policy::host_allowed(const std::string &host) const {
    if (host.empty() || !is_loopback_host(bind_host)) return true;
    const std::string name = host_name(host);
    return loopback_name(name) ||
           std::any_of(allowed_hosts.begin(), allowed_hosts.end(),
                       [&](const std::string &a) { return lower(a) == name; });
}

bool origin_policy::origin_allowed(const std::string &origin, const std::string &own_host) const {
    const std::string o = lower(origin);
    if (!own_host.empty() &&
        (o == "http://" + lower(own_host) || o == "https://" + lower(own_host)))
        return true;
    if (o.rfind("http://", 0) == 0 || o.rfind("https://", 0) == 0)
        if (loopback_name(origin_host(o))) return true;
    return std::any_of(cors_origins.begin(), cors_origins.end(),
                       [&](const std::string &c) { return c == "*" || lower(c) == o; });
}

api_error check_browser_request(const origin_policy &p, const httplib::Request &req) {
    api_error e;
    e.status               = 0;
    const std::string host = req.get_header_value("Host");
    if (!p.host_allowed(host)) {
        const std::string name = host_name(host).substr(0, 200);
        e                      = {403, "invalid_request_error",
                                  "the Host '" + name +
                                      "' is not served: this server listens on loopback and answers only loopback "
                                                           "names (start it with --allowed-host " +
                                      name + " to serve that name)",
                                  "", "host_not_allowed"};
        return e;
    }
    if (!req.has_header("Origin")) return e;
    const std::string origin = req.get_header_value("Origin");
    if (!p.origin_allowed(origin, host)) {
        const std::string shown = origin.substr(0, 200);
        e                       = {403, "invalid_request_error",
                                   "requests from web pages of origin '" + shown +
                                       "' are not allowed (start the server with --cors-origin " + shown +
                                       " to allow them)",
                                   "", "origin_not_allowed"};
        return e;
    }
    const bool changes = req.method == "POST" || req.method == "PUT" || req.method == "DELETE";
    if (changes && request_has_body(req) &&
        simple_content_type(req.get_header_value("Content-Type")))
        e = {415, "invalid_request_error",
             "a request from a web page must send its body with Content-Type: application/json", "",
             "unsupported_media_type"};
    return e;
}

}  // namespace sf
