// An API error before any response byte was sent: HTTP status + the fields every API's error
// body needs. Each adapter renders it in its own shape.
#pragma once

#include <string>

namespace sf {

struct api_error {
    int status       = 400;
    std::string type = "invalid_request_error";  // OpenAI error type
    std::string message;
    std::string param;  // request field at fault ("" = none)
    std::string code;   // machine code ("" = null)
};

/** 400 invalid_request_error naming `param`. */
api_error bad_request(std::string message, std::string param = "", std::string code = "");

/**
 * OpenAI error body: {"error":{"message","type","param","code"}} (platform.openai.com,
 * "Error codes"); param/code are null when empty.
 */
std::string openai_error_body(const api_error &e);

}  // namespace sf
