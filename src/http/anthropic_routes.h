// Anthropic endpoints: POST /v1/messages (streamed as typed SSE events, or not) and
// POST /v1/messages/count_tokens (the exact prompt /v1/messages would build). Query strings
// (?beta=true) are ignored; anthropic-version / anthropic-beta / x-api-key are accepted.
#pragma once

#include "api/anthropic/anthropic_response.h"
#include "http/openai_routes.h"

namespace sf {

class http_router;

/** The same needs as the OpenAI routes (sessions, model check, limits, priorities). */
using anthropic_route_context = openai_route_context;

/** Identity of `s`'s Anthropic message: msg_ id, the model it was served as, prompt count. */
anthropic_meta anthropic_session_meta(const session &s);

/**
 * Streams Anthropic session `s` as its typed SSE events from token index `cursor` on (a
 * re-attached reader, http/session_routes.h: it never cancels the generation), each event that
 * completes a token carrying `id: <session>:<index>`. `shutting_down`: a failed end is a 503.
 */
void stream_anthropic_session(const httplib::Request &req, httplib::Response &res,
                              std::shared_ptr<session> s, size_t cursor, bool shutting_down);

/** Registers the routes. */
void register_anthropic_routes(http_router &svr, anthropic_route_context ctx);

}  // namespace sf
