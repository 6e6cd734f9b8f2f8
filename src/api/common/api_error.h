// An API error before any response byte was sent: HTTP status + the fields every API's error
// body needs. Each dialect renders it in its own shape (api/openai/openai_error,
// api/anthropic/anthropic_response, api/ollama/ollama_response) and maps a worker's refusal
// (core/submit_result.h start_error) to its own status and fields.
#pragma once

#include <string>

#include "core/submit_result.h"

namespace sf {

/** Whose error shape a client expects. */
enum class api_dialect {
    OPENAI,     // {"error": {"message", "type", "param", "code"}} (also Responses, sessions)
    ANTHROPIC,  // {"type": "error", "error": {"type", "message"}}
    OLLAMA,     // {"error": "message"}
};

struct api_error {
    int status       = 400;
    std::string type = "invalid_request_error";  // OpenAI error type
    std::string message;
    std::string param;  // request field at fault ("" = none)
    std::string code;   // machine code ("" = null)
    // A refused media part (api/common/media_refusal.h): its medium, a newline and the part's
    // name, with which the handler says why once it knows the model. Never sent as such.
    std::string media;
};

/** 400 invalid_request_error naming `param`. */
api_error bad_request(std::string message, std::string param = "", std::string code = "");

/**
 * The HTTP status of a refusal before any token, the same in every API unless its dialect says
 * otherwise: invalid request and context length 400, unavailable 503, overloaded 429 (OpenAI's
 * rate limit; Anthropic says 529, Ollama 503), internal 500.
 */
int refusal_status(const start_error &se);

}  // namespace sf
