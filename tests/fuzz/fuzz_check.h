// What every request-parser fuzz target checks beyond "no crash, no sanitizer report, no leak":
// a rejected body yields a client error that every API can render (the error bodies are JSON
// that parses back, whatever bytes the message quotes from the request).
#pragma once

#include <nlohmann/json.hpp>

#include "api/anthropic/anthropic_response.h"
#include "api/common/api_error.h"
#include "api/ollama/ollama_response.h"
#include "api/openai/openai_error.h"
#include "fuzz_require.h"

namespace sf::fuzz {

/** A parser's rejection: a 4xx with a message, and error bodies in each API's shape. */
inline void check_rejection(const api_error &err) {
    require(err.status >= 400 && err.status < 500, "a rejected body is a 4xx");
    require(!err.message.empty(), "a rejection has a message");
    for (const std::string &body :
         {openai_error_body(err), anthropic_error_body(err), ollama_error_body(err.message)}) {
        require(!nlohmann::json::parse(body, nullptr, false).is_discarded(),
                "an error body is valid JSON");
    }
}

}  // namespace sf::fuzz
