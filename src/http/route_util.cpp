#include "http/route_util.h"

#include <cpp-httplib/httplib.h>

namespace sf {

bool client_gone(const httplib::Request &req, std::chrono::steady_clock::time_point &last_check) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_check < std::chrono::milliseconds(100)) return false;
    last_check = now;
    return req.is_connection_closed();
}

api_error from_start_error(const start_error &se) {
    api_error e;
    e.message = se.message;
    e.param   = se.param;
    switch (se.type) {
        case start_error::kind::INVALID_REQUEST:
            e.status = 400;
            break;
        case start_error::kind::CONTEXT_LENGTH:
            e.status = 400;
            e.code   = "context_length_exceeded";
            break;
        case start_error::kind::UNAVAILABLE:
            e.status = 503;
            e.type   = "server_error";
            e.code   = "service_unavailable";
            break;
        case start_error::kind::OVERLOADED:
            e.status = 429;
            e.type   = "rate_limit_error";
            e.code   = "overloaded";
            break;
        case start_error::kind::INTERNAL:
            e.status = 500;
            e.type   = "server_error";
            break;
    }
    return e;
}

bool apply_priority(const httplib::Request &req, const priority_config &cfg, generate_request &greq,
                    httplib::Response &res, api_error &err) {
    priority_headers ph{req.get_header_value("X-Superfluid-Priority"),
                        req.get_header_value("Authorization"), req.get_header_value("x-api-key"),
                        req.get_header_value("User-Agent")};
    if (!resolve_priority(greq.cls_from_body, ph, cfg, greq.cls, err)) return false;
    res.set_header("X-Superfluid-Priority", class_name(greq.cls));
    return true;
}

void serve_stream(httplib::Response &res, const char *content_type, std::shared_ptr<session> s,
                  std::function<bool(httplib::DataSink &)> step, std::function<bool()> done) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        content_type,
        [s, step, done](size_t, httplib::DataSink &sink) {
            if (done()) return false;
            bool keep = step(sink);
            if (!keep) s->cancel();
            return keep;
        },
        [s, done](bool success) {
            if (!success || !done()) s->cancel();
        });
}

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace sf
