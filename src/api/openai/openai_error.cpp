#include "api/openai/openai_error.h"

#include <nlohmann/json.hpp>

namespace sf {

std::string openai_error_body(const api_error &e) {
    nlohmann::json err = {{"message", e.message}, {"type", e.type}};
    err["param"]       = e.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.param);
    err["code"]        = e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.code);
    return nlohmann::json{{"error", err}}.dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace);
}

api_error openai_refusal(const start_error &se) {
    api_error e;
    e.status  = refusal_status(se);
    e.message = se.message;
    e.param   = se.param;
    switch (se.type) {
        case start_error::kind::CONTEXT_LENGTH:
            e.code = "context_length_exceeded";
            break;
        case start_error::kind::UNAVAILABLE:
            e.type = "server_error";
            e.code = "service_unavailable";
            break;
        case start_error::kind::OVERLOADED:
            e.type = "rate_limit_error";
            e.code = "overloaded";
            break;
        case start_error::kind::INTERNAL:
            e.type = "server_error";
            break;
        case start_error::kind::INVALID_REQUEST:
            break;
    }
    return e;
}

}  // namespace sf
