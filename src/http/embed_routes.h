// Embedding endpoints: POST /v1/embeddings (OpenAI), POST /api/embed and the legacy POST
// /api/embeddings (Ollama). All run on the worker's Embed RPC (a separate embedding context,
// see engine/llama/llama_embedder.h); OpenAI and /api/embed vectors are L2-normalized, the
// legacy endpoint's are not (as Ollama returns them).
#pragma once

#include "http/route_context.h"

namespace sf {

class http_router;

void register_embed_routes(http_router &svr, route_context ctx);

}  // namespace sf
