// Ollama's model and server routes: GET /api/tags, POST /api/show, GET /api/ps, GET
// /api/version, GET and HEAD / ("Ollama is running"). /api/ps has Ollama's shape
// ({"models": [...]}) plus Superfluid's own fields (each model's path, parallel slots and
// worker; top-level "sessions" with class and state), which `superfluid ps` prints.
#pragma once

#include <string>

#include "http/route_context.h"

namespace sf {

class http_router;

/** Registers the routes; `model_path` is the served GGUF file; /api/tags also lists the
 *  models pulled into the store whose index is under `state_dir` (none when ""). */
void register_ollama_model_routes(http_router &svr, route_context ctx, std::string model_path,
                                  std::string state_dir = "");

/** Ollama's display name of the served model: "<model id>:latest". */
std::string ollama_model_name(const std::string &model_id);

}  // namespace sf
