// Anthropic endpoints: POST /v1/messages (streamed as typed SSE events, or not) and
// POST /v1/messages/count_tokens (the exact prompt /v1/messages would build). Query strings
// (?beta=true) are ignored; anthropic-version / anthropic-beta / x-api-key are accepted.
#pragma once

#include "http/openai_routes.h"

namespace sf {

/** The same needs as the OpenAI routes (sessions, model check, limits, priorities). */
using anthropic_route_context = openai_route_context;

/** Registers the routes. */
void register_anthropic_routes(httplib::Server &svr, anthropic_route_context ctx);

}  // namespace sf
