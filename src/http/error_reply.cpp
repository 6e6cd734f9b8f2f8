#include "http/error_reply.h"

#include <cpp-httplib/httplib.h>

#include "api/anthropic/anthropic_response.h"
#include "api/ollama/ollama_response.h"
#include "api/openai/openai_error.h"

namespace sf {

api_dialect dialect_of(const httplib::Request &req) {
    if (req.path.rfind("/v1/messages", 0) == 0 || req.has_header("anthropic-version"))
        return api_dialect::ANTHROPIC;
    if (req.path.rfind("/api/", 0) == 0) return api_dialect::OLLAMA;
    return api_dialect::OPENAI;
}

void send_error(httplib::Response &res, api_dialect d, const api_error &e) {
    res.status = e.status;
    switch (d) {
        case api_dialect::ANTHROPIC:
            res.set_content(anthropic_error_body(e), "application/json");
            return;
        case api_dialect::OLLAMA:
            res.set_content(ollama_error_body(e.message), "application/json");
            return;
        case api_dialect::OPENAI:
            break;
    }
    res.set_content(openai_error_body(e), "application/json");
}

void send_error(httplib::Response &res, api_dialect d, int status, const std::string &message) {
    api_error e{status, status >= 500 ? "server_error" : "invalid_request_error", message, "", ""};
    send_error(res, d, e);
}

void send_api_error(const httplib::Request &req, httplib::Response &res, const api_error &e) {
    const api_dialect d = dialect_of(req);
    if (d == api_dialect::ANTHROPIC && e.status == 503) {
        api_error a = e;
        a.status    = 529;  // Anthropic's "overloaded"
        return send_error(res, d, a);
    }
    send_error(res, d, e);
}

}  // namespace sf
