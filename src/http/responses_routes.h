// OpenAI Responses API: POST /v1/responses, answered as one response object or streamed as
// typed SSE events (api/responses/responses_response.h); GET /v1/responses/{id} (the object, or
// with ?stream=true&starting_after=N its events replayed from the journal then followed live) and
// POST /v1/responses/{id}/cancel. A response id is "resp_<session id>", so it is found in the
// token journal, also after a head restart. `background: true` answers at once (status queued
// or in_progress) and the generation runs on with no client attached; a plain request's client
// that disconnects cancels it. Errors before the stream are OpenAI error bodies with an HTTP
// status; after it began, response.failed ends it. Responses created with store:false are not
// retrievable (404); previous_response_id and conversations are not served.
#pragma once

#include "http/route_context.h"

namespace sf {

class http_router;

void register_responses_routes(http_router &svr, route_context ctx);

}  // namespace sf
