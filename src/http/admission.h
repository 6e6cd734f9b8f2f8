// What the head's HTTP server checks before any route (httplib's pre-routing handler, on the
// connection's thread): a connection over the limit (connection_gate's overflow) gets 503 with
// Retry-After; a Host, Origin or browser Content-Type the origin policy refuses gets 403/415
// (http/origin_policy.h); and with API keys configured (`serve --api-key`) a request without
// one of them gets 401, each in the shape of the API it came in on.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/api_error.h"
#include "http/connection_gate.h"
#include "http/error_reply.h"
#include "http/origin_policy.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace sf {

/**
 * Installs the pre-routing checks. `origins`: which browser requests are served (a refused one
 * is answered before its key is looked at, preflights included). `api_keys` empty: no key is asked
 * for. Otherwise every route but GET /health, the /ui page and CORS preflights needs
 * `Authorization: Bearer KEY` or `x-api-key: KEY` with one of them. `deadline` (may be null): the
 * headers are in once pre-routing runs (disarm), and the next request is awaited once a response is
 * logged (arm).
 */
void install_admission(httplib::Server &svr, std::vector<std::string> api_keys,
                       origin_policy origins, std::shared_ptr<connection_stats> stats,
                       std::shared_ptr<header_deadline> deadline);

/** The gate's counters in Prometheus text (superfluid:http_connections_*). */
std::string connection_metrics_text(const connection_stats &s);

}  // namespace sf
