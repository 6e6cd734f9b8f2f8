// Error replies in the shape of the API a request came in on: the one place that tells an
// Anthropic request from an Ollama or OpenAI one by its path and headers, and the one writer of
// an error body for each (issue #39: the routes had seven copies and three path checks).
// Stateless; any thread.
#pragma once

#include <string>

#include "api/common/api_error.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace sf {

/**
 * The dialect of `req`: Anthropic for /v1/messages… or any request with an anthropic-version
 * header (Anthropic's SDKs and Claude Code send it), Ollama for /api/…, else OpenAI.
 */
api_dialect dialect_of(const httplib::Request &req);

/** Answers `e` (its status and body) in dialect `d`'s error shape. */
void send_error(httplib::Response &res, api_dialect d, const api_error &e);

/** The same for a status and a message alone (Ollama's errors carry nothing else). */
void send_error(httplib::Response &res, api_dialect d, int status, const std::string &message);

/**
 * Answers `e` in the shape of the API `req` came in on (dialect_of); for Anthropic a 503
 * (overload before any route) becomes Anthropic's 529 overloaded_error.
 */
void send_api_error(const httplib::Request &req, httplib::Response &res, const api_error &e);

}  // namespace sf
