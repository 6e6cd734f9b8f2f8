// Anthropic endpoints: POST /v1/messages (streamed as typed SSE events, or not; the Anthropic
// dialect, api/anthropic/anthropic_dialect.h, served by http/generation_handler.h) and
// POST /v1/messages/count_tokens (the exact prompt /v1/messages would build). Query strings
// (?beta=true) are ignored; anthropic-version / anthropic-beta / x-api-key are accepted.
#pragma once

#include "http/route_context.h"

namespace sf {

class http_router;

/** Registers the routes. */
void register_anthropic_routes(http_router &svr, route_context ctx);

}  // namespace sf
