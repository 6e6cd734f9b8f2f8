// OpenAI generation endpoints: POST /v1/chat/completions and POST /v1/completions, streamed
// (SSE, `data: [DONE]`) or not, served by the one generation handler
// (http/generation_handler.h) with the OpenAI dialect (api/openai/openai_dialect.h).
#pragma once

#include "http/route_context.h"

namespace sf {

class http_router;

/** Registers the routes. Bodies are read whatever their Content-Type. */
void register_openai_routes(http_router &svr, route_context ctx);

}  // namespace sf
