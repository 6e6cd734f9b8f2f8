// The head's HTTP server: the routes of every API on one router (http/router.h), served by the
// event-driven server (http/event_server.h); CORS (for the origins http/origin_policy.h
// allows), error bodies for failures found before routing, and the non-generation endpoints
// (/health, /v1/models, /metrics). Generation routes live in the *_routes.cpp files.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/common/priority.h"
#include "http/connection_stats.h"
#include "http/event_server.h"
#include "http/route_context.h"
#include "http/router.h"
#include "session/session_manager.h"

namespace sf {

struct http_options {
    std::string host        = "127.0.0.1";
    int port                = 8453;
    size_t max_body_bytes   = 32u << 20;  // larger bodies get 413
    int threads             = 256;        // requests handled at once; beyond: 503 (event_server.h)
    double header_timeout_s = 30;  // request line + headers must arrive within (event_server.h)
    std::string model_id;          // the default model's id: it answers unknown names
    std::string model_path;        // the default model's file
    // Every served model, the default included, in the order /v1/models and /api/tags list
    // them (empty: the default model alone, filled in by the constructor).
    std::vector<served_model> models;
    std::string state_dir;     // the model store's index (/api/pull, /api/delete)
    priority_config priority;  // how requests get their class (api/common/priority.h)

    bool strict_model_names = false;         // unknown model names: 404 (http/model_names.h)
    std::vector<std::string> api_keys;       // non-empty: every API route needs one (admission.h)
    std::vector<std::string> admin_keys;     // --admin-key: API keys that see and use every session
    std::string identity_secret;             // keys the client ids (api/common/client_identity.h)
    std::vector<std::string> cors_origins;   // --cors-origin (http/origin_policy.h)
    std::vector<std::string> allowed_hosts;  // --allowed-host (http/origin_policy.h)
};

class http_server {
  public:
    http_server(session_manager &sessions, http_options opts);
    ~http_server();

    /** Binds and serves until stop(); returns false when the address cannot be bound. */
    bool listen();
    void stop();
    /**
     * The id of the served model `name` designates (id, file name or stem, path, GGUF
     * general.name; "" or "default": the default model); "" when none does.
     */
    std::string model_of(const std::string &name);

  private:
    void register_routes();

    session_manager &sessions_;
    http_options opts_;
    std::unique_ptr<http_router> svr_;
    std::shared_ptr<connection_stats> conn_stats_ = std::make_shared<connection_stats>();
    std::unique_ptr<event_server> server_;
};

}  // namespace sf
