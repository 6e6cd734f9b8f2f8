// Ollama's model and server routes: GET /api/tags, POST /api/show, GET /api/ps, GET
// /api/version, GET and HEAD / ("Ollama is running"). /api/ps has Ollama's shape
// ({"models": [...]}) plus Superfluid's own fields (each model's path, parallel slots and
// worker; top-level "sessions" with class and state), which `superfluid ps` prints.
#pragma once

#include <string>

#include "http/openai_routes.h"

namespace sf {

/** Registers the routes; `model_path` is the served GGUF file. */
void register_ollama_model_routes(httplib::Server &svr, openai_route_context ctx,
                                  std::string model_path);

/** Ollama's display name of the served model: "<model id>:latest". */
std::string ollama_model_name(const std::string &model_id);

}  // namespace sf
