// OpenAI's error shape (also the Responses API's and the session endpoints'): the body and a
// worker's refusal in OpenAI's terms (status, type, code). Pure functions, any thread.
#pragma once

#include <string>

#include "api/common/api_error.h"
#include "core/submit_result.h"

namespace sf {

/**
 * OpenAI error body: {"error":{"message","type","param","code"}} (platform.openai.com,
 * "Error codes"); param/code are null when empty.
 */
std::string openai_error_body(const api_error &e);

/**
 * A session that could not start, in OpenAI's terms: 400 (context_length_exceeded for a prompt
 * too long), 429 rate_limit_error "overloaded" for a full class queue, 503 server_error
 * "service_unavailable", 500 server_error; the refusal's message and param.
 */
api_error openai_refusal(const start_error &se);

}  // namespace sf
