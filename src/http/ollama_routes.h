// Ollama's native generation API: POST /api/chat and POST /api/generate, streamed as NDJSON
// (the default) or answered as one JSON object (`stream: false`), by the one generation handler
// (http/generation_handler.h) with the Ollama dialect (api/ollama/ollama_dialect.h). Errors
// before the first line are {"error": "…"} with an HTTP status (400 bad input or context
// overflow, 404 unknown model, 429/503 busy); after it, an {"error": "…"} line ends the stream.
// A client that disconnects cancels its session. Model listing routes live in
// ollama_model_routes.h.
#pragma once

#include "http/route_context.h"

namespace sf {

class http_router;

/** Registers /api/chat and /api/generate. */
void register_ollama_routes(http_router &svr, route_context ctx);

}  // namespace sf
