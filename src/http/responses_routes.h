// OpenAI Responses API: POST /v1/responses, answered as one response object or streamed as
// typed SSE events (api/responses_response.h). Errors before the stream are OpenAI error
// bodies with an HTTP status; after it began, response.failed ends it. A client that
// disconnects cancels its session. Stored responses, background mode and GET/cancel by id
// are not served (no response store yet).
#pragma once

#include "http/openai_routes.h"

namespace sf {

void register_responses_routes(httplib::Server &svr, openai_route_context ctx);

}  // namespace sf
