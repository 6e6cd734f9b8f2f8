#include "http/admission.h"

#include <cpp-httplib/httplib.h>

#include "http/key_check.h"
#include "http/router.h"

namespace sf {

namespace {

bool open_route(const httplib::Request &req) {
    return req.method == "OPTIONS" ||
           (req.method == "GET" && (req.path == "/health" || req.path == "/ui"));
}

}  // namespace

void install_admission(http_router &svr, std::vector<std::string> api_keys, origin_policy origins) {
    // Every request thread busy (event_server): 503 + Retry-After in the caller's shape.
    svr.set_overload_handler([](const httplib::Request &req, httplib::Response &res) {
        res.set_header("Retry-After", "1");
        api_error e{503, "server_error", "too many requests being handled; retry shortly", "",
                    "too_many_connections"};
        send_api_error(req, res, e);
    });
    key_set keys(api_keys);
    svr.set_pre_routing_handler([keys = std::move(keys), origins = std::move(origins)](
                                    const httplib::Request &req, httplib::Response &res) {
        using R = http_router::outcome;
        if (api_error b = check_browser_request(origins, req); b.status != 0) {
            send_api_error(req, res, b);
            return R::HANDLED;
        }
        if (!keys.empty() && !open_route(req) && !keys.contains(request_key(req))) {
            api_error e{401, "authentication_error",
                        "a valid API key is required (Authorization: Bearer KEY or x-api-key)", "",
                        "invalid_api_key"};
            res.set_header("WWW-Authenticate", "Bearer");
            send_api_error(req, res, e);
            return R::HANDLED;
        }
        return R::UNHANDLED;
    });
}

}  // namespace sf
