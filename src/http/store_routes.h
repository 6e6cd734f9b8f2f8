// Ollama's model-management endpoints over the model store (models/model_store.h):
//   POST   /api/pull    {"model": "org/repo[:TAG][@rev]", "stream": true}
//          → NDJSON progress objects like Ollama's: {"status": "pulling manifest"},
//            {"status": "downloading <digest>", "digest": "sha256:…", "total": N, "completed": M},
//            {"status": "verifying sha256 digest"}, {"status": "writing manifest"},
//            {"status": "success"}; a failure mid-stream is a last {"error": "…"} line.
//            "stream": false answers once: {"status": "success"} or {"error"} with a status.
//   DELETE /api/delete  {"model": "org/repo:TAG"} → 200 with no body, 404 {"error"} if unknown.
// ("name" is accepted for "model", as Ollama does.) /api/tags, /api/show are Ollama's other
// model endpoints and live with the Ollama API routes.
#pragma once

#include <string>
#include <vector>

#include "api/ollama/ollama_models.h"

namespace sf {

class http_router;

/** Registers /api/pull and /api/delete over the store whose index is under `state_dir`. */
void register_store_routes(http_router &svr, const std::string &state_dir);

/**
 * The pulled models as Ollama /api/tags entries (name, size, modified_at = when pulled,
 * digest = the first file's SHA-256, quantization_level), leaving out the model named `exclude`
 * (the served one, listed by the Ollama routes themselves).
 */
std::vector<ollama_model_entry> pulled_model_entries(const std::string &state_dir,
                                                     const std::string &exclude);

}  // namespace sf
