#include "http/http_server.h"

#include <cpp-httplib/httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "api/api_error.h"
#include "http/admission.h"
#include "http/anthropic_routes.h"
#include "http/embed_routes.h"
#include "http/error_reply.h"
#include "http/header_deadline.h"
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

using json = nlohmann::json;

http_server::http_server(session_manager &sessions, http_options opts)
    : sessions_(sessions), opts_(std::move(opts)), svr_(std::make_unique<httplib::Server>()) {
    // SO_REUSEADDR only (a restart binds past TIME_WAIT): httplib's default SO_REUSEPORT let a
    // second server listen on a port the first holds, the kernel splitting connections.
    svr_->set_socket_options(
        [](socket_t s) { httplib::set_socket_opt(s, SOL_SOCKET, SO_REUSEADDR, 1); });
    register_routes();
}

http_server::~http_server() {
    stop();
}

bool http_server::model_matches(const std::string &name) {
    if (name.empty() || name == opts_.model_id || name == "default") return true;
    std::filesystem::path p(opts_.model_path);
    if (name == opts_.model_path || name == p.filename().string() || name == p.stem().string())
        return true;
    auto h = sessions_.health();
    return h.reachable && !h.status.model_name.empty() && name == h.status.model_name;
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
    auto &svr          = *svr_;
    const size_t limit = static_cast<size_t>(std::max(1, opts_.threads));
    auto stats         = conn_stats_;
    // Idle keep-alive connections close (silently) before the header deadline could send them
    // a 408 that no request asked for.
    const auto header_ms =
        std::chrono::milliseconds(static_cast<int64_t>(opts_.header_timeout_s * 1000));
    deadline_ = std::make_shared<header_deadline>(opts_.port, header_ms, conn_stats_);
    svr.set_keep_alive_timeout(std::clamp<time_t>(header_ms.count() / 2000, 1, 5));
    auto deadline      = deadline_;
    svr.new_task_queue = [limit, stats, deadline] {
        return new connection_gate(limit, stats, deadline);
    };
    const origin_policy origins{opts_.host, opts_.cors_origins, opts_.allowed_hosts};
    // Admin keys are API keys too (admission accepts both); their holders see every session.
    std::vector<std::string> keys = opts_.api_keys;
    keys.insert(keys.end(), opts_.admin_keys.begin(), opts_.admin_keys.end());
    auto access = std::make_shared<const session_access>(!keys.empty(), opts_.admin_keys,
                                                         opts_.identity_secret);
    install_admission(svr, keys, origins, conn_stats_, deadline_);
    svr.set_payload_max_length(opts_.max_body_bytes);
    // Reading a request (headers and body) must not take long: a slow or stalled client holds
    // an HTTP thread. Generation time is not bounded by this (it is not reading).
    svr.set_read_timeout(30);
    svr.set_write_timeout(600);

    // Bodies for failures httplib detects itself (413, unknown route, …), in the caller's shape.
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
        } else if (res.status == 400) {
            // httplib's own 400: the request line or headers could not be read.
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
    svr.set_post_routing_handler(
        [origins, deadline = deadline_](const httplib::Request &req, httplib::Response &res) {
            cors_headers(origins, req, res);
            if (deadline) header_deadline::after_streamed_body(res);
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

    register_status_routes(svr, sessions_, opts_.model_id, opts_.model_path, conn_stats_);
    if (!opts_.state_dir.empty()) register_store_routes(svr, opts_.state_dir);

    openai_route_context rc;
    rc.sessions       = &sessions_;
    rc.model_ok       = [this](const std::string &n) { return model_matches(n); };
    rc.model_id       = opts_.model_id;
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
    if (!svr_->bind_to_port(opts_.host, opts_.port)) {
        SF_LOG_ERROR("http", "cannot listen on %s:%d (in use?)", opts_.host.c_str(), opts_.port);
        return false;
    }
    SF_LOG_INFO("http", "listening on http://%s:%d", opts_.host.c_str(), opts_.port);
    return svr_->listen_after_bind();
}

void http_server::stop() {
    if (svr_) svr_->stop();
}

}  // namespace sf
