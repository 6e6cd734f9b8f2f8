#include "http/admission.h"

#include <cpp-httplib/httplib.h>

#include "http/header_deadline.h"
#include "http/key_check.h"

namespace sf {

namespace {

bool open_route(const httplib::Request &req) {
    return req.method == "OPTIONS" ||
           (req.method == "GET" && (req.path == "/health" || req.path == "/ui"));
}

}  // namespace

void install_admission(httplib::Server &svr, std::vector<std::string> api_keys,
                       origin_policy origins, std::shared_ptr<connection_stats> stats,
                       std::shared_ptr<header_deadline> deadline) {
    if (deadline)
        svr.set_logger([deadline](const httplib::Request &, const httplib::Response &res) {
            // httplib logs once the headers (and a body held in memory) are written, before a
            // streamed body: that one arms the deadline when it is out (after_streamed_body).
            if (!res.content_provider_)
                deadline->arm();  // the response is out: the next request's headers are awaited
        });
    key_set keys(api_keys);
    svr.set_pre_routing_handler([keys = std::move(keys), origins = std::move(origins), stats,
                                 deadline](const httplib::Request &req, httplib::Response &res) {
        using R = httplib::Server::HandlerResponse;
        if (deadline) {
            // The headers are in; a body still to come gets its own allowance.
            if (req.method != "GET" && req.method != "HEAD" && request_has_body(req))
                header_deadline::body_expected();
            else
                deadline->disarm();
        }
        if (connection_gate::overflowing()) {
            ++stats->refused;
            res.set_header("Retry-After", "1");
            api_error e{503, "server_error",
                        "too many open connections to this server; retry shortly", "",
                        "too_many_connections"};
            send_api_error(req, res, e);
            return R::Handled;  // an error status closes the connection (httplib)
        }
        if (api_error b = check_browser_request(origins, req); b.status != 0) {
            send_api_error(req, res, b);
            return R::Handled;
        }
        if (!keys.empty() && !open_route(req) && !keys.contains(request_key(req))) {
            api_error e{401, "authentication_error",
                        "a valid API key is required (Authorization: Bearer KEY or x-api-key)", "",
                        "invalid_api_key"};
            res.set_header("WWW-Authenticate", "Bearer");
            send_api_error(req, res, e);
            return R::Handled;
        }
        return R::Unhandled;
    });
}

std::string connection_metrics_text(const connection_stats &s) {
    auto line = [](const char *name, const char *type, const char *help, uint64_t v) {
        return std::string("# HELP superfluid:") + name + " " + help +
               "\n# TYPE superfluid:" + name + " " + type + "\nsuperfluid:" + name + " " +
               std::to_string(v) + "\n";
    };
    return line("http_header_timeouts_total", "counter",
                "connections answered 408 because the request headers came too slowly",
                s.header_timeouts.load()) +
           line("http_connections_open", "gauge", "connections being served", s.open.load()) +
           line("http_connections_accepted_total", "counter", "connections served",
                s.accepted.load()) +
           line("http_connections_refused_total", "counter",
                "connections over the limit answered 503", s.refused.load()) +
           line("http_connections_dropped_total", "counter",
                "connections over the limit closed unanswered (overflow queue full)",
                s.dropped.load());
}

}  // namespace sf
