#include "api/common/api_error.h"

namespace sf {

api_error bad_request(std::string message, std::string param, std::string code) {
    api_error e;
    e.status  = 400;
    e.message = std::move(message);
    e.param   = std::move(param);
    e.code    = std::move(code);
    return e;
}

int refusal_status(const start_error &se) {
    switch (se.type) {
        case start_error::kind::INVALID_REQUEST:
        case start_error::kind::CONTEXT_LENGTH:
            return 400;
        case start_error::kind::UNAVAILABLE:
            return 503;
        case start_error::kind::OVERLOADED:
            return 429;
        case start_error::kind::INTERNAL:
            break;
    }
    return 500;
}

}  // namespace sf
