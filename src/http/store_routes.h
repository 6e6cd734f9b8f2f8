// Ollama's model-management endpoints over the model store (store/model_store.h):
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

namespace httplib {
class Server;
}

namespace sf {

/** Registers /api/pull and /api/delete over the store whose index is under `state_dir`. */
void register_store_routes(httplib::Server &svr, const std::string &state_dir);

}  // namespace sf
