// Endpoints that report state rather than generate: GET /health, GET /v1/models,
// GET /metrics (Prometheus text; names mirror vLLM's where one exists). /api/ps is in
// ollama_model_routes.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "http/connection_stats.h"
#include "session/session_manager.h"

namespace sf {

class http_router;

/**
 * Registers the status endpoints; /v1/models lists `model_ids` (every served model) in order;
 * /metrics adds the HTTP connection gate's counters when `connections` is given.
 */
void register_status_routes(http_router &svr, session_manager &sessions,
                            std::vector<std::string> model_ids,
                            std::shared_ptr<connection_stats> connections = nullptr);

}  // namespace sf
