// What the head's HTTP server checks before any route (the router's pre-routing handler, on a
// request thread): a Host, Origin or browser Content-Type the origin policy refuses gets 403/415
// (http/origin_policy.h); with API keys configured (`serve --api-key`) a request without one of
// them gets 401. Also the answer to a request that finds every request thread busy (503 with
// Retry-After, the router's overload handler, on the I/O thread). Each in the shape of the API
// the request came in on.
#pragma once

#include <string>
#include <vector>

#include "api/common/api_error.h"
#include "http/error_reply.h"
#include "http/origin_policy.h"

namespace sf {

class http_router;

/**
 * Installs the pre-routing checks and the overload answer. `origins`: which browser requests
 * are served (a refused one is answered before its key is looked at, preflights included).
 * `api_keys` empty: no key is asked for. Otherwise every route but GET /health, the /ui page and
 * CORS preflights needs `Authorization: Bearer KEY` or `x-api-key: KEY` with one of them.
 */
void install_admission(http_router &svr, std::vector<std::string> api_keys, origin_policy origins);

}  // namespace sf
