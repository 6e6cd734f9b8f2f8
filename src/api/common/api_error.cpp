#include "api/common/api_error.h"

#include <nlohmann/json.hpp>

namespace sf {

api_error bad_request(std::string message, std::string param, std::string code) {
    api_error e;
    e.status  = 400;
    e.message = std::move(message);
    e.param   = std::move(param);
    e.code    = std::move(code);
    return e;
}

std::string openai_error_body(const api_error &e) {
    nlohmann::json err = {{"message", e.message}, {"type", e.type}};
    err["param"]       = e.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.param);
    err["code"]        = e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.code);
    return nlohmann::json{{"error", err}}.dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace);
}

}  // namespace sf
