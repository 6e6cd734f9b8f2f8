#include "http/http_server.h"

#include <cpp-httplib/httplib.h>

#include <algorithm>
#include <filesystem>

#include "api/common/api_error.h"
#include "api/openai/openai_error.h"
#include "http/admission.h"
#include "http/anthropic_routes.h"
#include "http/embed_routes.h"
#include "http/error_reply.h"
#include "http/event_server.h"
#include "http/ollama_model_routes.h"
#include "http/ollama_routes.h"
#include "http/openai_routes.h"
#include "http/responses_routes.h"
#include "http/session_routes.h"
#include "http/status_routes.h"
#include "http/store_routes.h"
#include "http/ui_routes.h"
#include "util/log.h"

namespace sf {

http_server::http_server(session_manager &sessions, http_options opts)
    : sessions_(sessions), opts_(std::move(opts)), svr_(std::make_unique<http_router>()) {
    if (opts_.models.empty()) opts_.models.push_back({opts_.model_id, opts_.model_path, ""});
    register_routes();
    event_server_options eo;
    eo.host           = opts_.host;
    eo.port           = opts_.port;
    eo.max_body_bytes = opts_.max_body_bytes;
    eo.max_requests   = static_cast<size_t>(std::max(1, opts_.threads));
    eo.header_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(opts_.header_timeout_s * 1000));
    server_ = std::make_unique<event_server>(*svr_, eo, conn_stats_);
}

http_server::~http_server() {
    stop();
}

std::string http_server::model_of(const std::string &name) {
    if (name.empty() || name == "default") return opts_.model_id;
    for (const auto &m : opts_.models) {
        std::filesystem::path p(m.path);
        if (name == m.id || name == m.path || name == p.filename().string() ||
            name == p.stem().string() || (!m.general_name.empty() && name == m.general_name))
            return m.id;
    }
    // The default model's general.name as its worker reports it.
    auto h = sessions_.health();
    if (h.reachable && !h.status.model_name.empty() && name == h.status.model_name)
        return opts_.model_id;
    return "";
}

// A page of an allowed origin may read the response: its origin is echoed (never "*"), set once
// (a duplicated Access-Control-Allow-Origin is rejected by browsers). Requests without an Origin
// (SDKs, curl, agents) need no CORS headers; refused origins were answered in pre-routing.
static void cors_headers(const origin_policy &p, const httplib::Request &req,
                         httplib::Response &res) {
    if (!req.has_header("Origin") || res.has_header("Access-Control-Allow-Origin")) return;
    const std::string origin = req.get_header_value("Origin");
    if (!p.origin_allowed(origin, req.get_header_value("Host"))) return;
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
}

void http_server::register_routes() {
    auto &svr = *svr_;
    const origin_policy origins{opts_.host, opts_.cors_origins, opts_.allowed_hosts};
    // Admin keys are API keys too (admission accepts both); their holders see every session.
    std::vector<std::string> keys = opts_.api_keys;
    keys.insert(keys.end(), opts_.admin_keys.begin(), opts_.admin_keys.end());
    auto access = std::make_shared<const session_access>(!keys.empty(), opts_.admin_keys,
                                                         opts_.identity_secret);
    install_admission(svr, keys, origins);

    // Bodies for failures found before or by routing (400, 408, 413, unknown route, …), in the
    // caller's shape.
    svr.set_error_handler([origins](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty()) return;
        api_error e;
        e.status = res.status;
        if (res.status == 413) {
            e.message = "the request body is too large";
            e.code    = "request_too_large";
        } else if (res.status == 404) {
            const size_t shown = 200;  // a long path is not echoed whole
            e.message = "unknown endpoint: " + req.method + " " + req.path.substr(0, shown) +
                        (req.path.size() > shown ? "…" : "");
            e.code = "unknown_url";
        } else if (res.status == 405) {
            e.message = "method " + req.method + " is not allowed on " + req.path.substr(0, 200) +
                        " (allowed: " + res.get_header_value("Allow") + ")";
            e.code = "method_not_allowed";
        } else if (res.status == 501) {
            e.message = "the HTTP method " + req.method.substr(0, 32) +
                        " is not supported (GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH)";
            e.code = "unsupported_method";
        } else if (res.status == 408) {
            e.message = "the request (its headers or body) did not arrive in time";
            e.code    = "request_timeout";
        } else if (res.status == 400) {
            // The request line or headers could not be read (event_server).
            e.message =
                "the request line or headers cannot be read (at most 100 header lines of "
                "8 KiB each)";
            e.code = "bad_request";
        } else {
            e.message = httplib::status_message(res.status);
            if (res.status >= 500) e.type = "server_error";
        }
        cors_headers(origins, req, res);
        // In the shape of the API the request came in on (Anthropic's clients send
        // anthropic-version; Ollama's paths are /api/…).
        send_error(res, dialect_of(req), e);
    });
    svr.set_exception_handler(
        [](const httplib::Request &, httplib::Response &res, std::exception_ptr ep) {
            std::string what = "internal error";
            try {
                if (ep) std::rethrow_exception(ep);
            } catch (const std::exception &ex) {
                what = ex.what();
            } catch (...) {
            }
            SF_LOG_ERROR("http", "handler threw: %s", what.c_str());
            api_error e{500, "server_error", "internal server error: " + what, "", ""};
            res.status = 500;
            res.set_content(openai_error_body(e), "application/json");
        });
    svr.set_post_routing_handler([origins](const httplib::Request &req, httplib::Response &res) {
        cors_headers(origins, req, res);
    });

    // CORS preflight from an allowed origin (pre-routing refused the others): no
    // authentication, allow what browsers ask for.
    svr.Options(".*", [](const httplib::Request &req, httplib::Response &res) {
        res.status = 204;  // Access-Control-Allow-Origin comes from the post-routing handler
        res.set_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS, HEAD");
        std::string asked = req.get_header_value("Access-Control-Request-Headers");
        res.set_header(
            "Access-Control-Allow-Headers",
            asked.empty()
                ? "authorization, content-type, x-api-key, anthropic-version, anthropic-beta"
                : asked);
        res.set_header("Access-Control-Max-Age", "86400");
    });

    std::vector<std::string> ids;
    for (const auto &m : opts_.models) ids.push_back(m.id);
    register_status_routes(svr, sessions_, ids, conn_stats_);
    if (!opts_.state_dir.empty()) register_store_routes(svr, opts_.state_dir);

    route_context rc;
    rc.sessions       = &sessions_;
    rc.model_of       = [this](const std::string &n) { return model_of(n); };
    rc.model_id       = opts_.model_id;
    rc.models         = opts_.models;
    rc.max_body_bytes = opts_.max_body_bytes;
    rc.priority       = opts_.priority;
    // Which model answers a name (http/model_names.h).
    rc.state_dir          = opts_.state_dir;
    rc.strict_model_names = opts_.strict_model_names;
    rc.identity_secret    = opts_.identity_secret;
    rc.access             = access;
    register_anthropic_routes(svr, rc);
    register_ollama_routes(svr, rc);
    register_embed_routes(svr, rc);
    register_responses_routes(svr, rc);
    register_ollama_model_routes(svr, rc, opts_.model_path, opts_.state_dir);
    register_openai_routes(svr, std::move(rc));
    register_session_routes(svr, sessions_, access);
    register_ui_routes(svr, sessions_, opts_.model_id, access);
}

bool http_server::listen() {
    if (!server_->bind()) {
        SF_LOG_ERROR("http", "cannot listen on %s:%d (in use?)", opts_.host.c_str(), opts_.port);
        return false;
    }
    SF_LOG_INFO("http", "listening on http://%s:%d", opts_.host.c_str(), opts_.port);
    server_->run();
    return true;
}

void http_server::stop() {
    if (server_) server_->stop();
}

}  // namespace sf
