#include "http/session_routes.h"

#include <cpp-httplib/httplib.h>

#include "api/anthropic/anthropic_dialect.h"
#include "api/common/api_error.h"
#include "api/common/session_state.h"
#include "api/ollama/ollama_dialect.h"
#include "api/openai/openai_dialect.h"
#include "api/responses/responses_run.h"
#include "http/error_reply.h"
#include "http/route_util.h"
#include "http/router.h"
#include "http/session_ids.h"
#include "http/stream_driver.h"

namespace sf {

namespace {

// The session named by the path, or a 404 written into `res`. A session the caller may not use
// (with keys: made with another key, and the caller no admin) is answered as an unknown one,
// so a 404 does not tell a guessed id exists.
std::shared_ptr<session> find_or_404(session_manager &sessions, const session_access &access,
                                     const httplib::Request &req, httplib::Response &res,
                                     bool &interrupted) {
    const std::string id = req.matches[1];
    auto s               = sessions.find(id, &interrupted);
    if (s && !access.may_use(access.of(req), s->client())) s = nullptr;
    if (!s) {
        api_error e{404, "invalid_request_error",
                    "no session '" + id + "' (unknown, or removed by journal retention)", "id",
                    "session_not_found"};
        send_error(res, api_dialect::OPENAI, e);
    }
    return s;
}

// The stream encoder of session `s`'s own API for a reader that re-attaches: Anthropic events,
// Responses events, Ollama NDJSON lines; OpenAI chunks for the rest (text-completion chunks for
// prompt-style APIs, chat chunks for the others; ?include_usage=true adds the usage chunk).
std::unique_ptr<stream_encoder> reattach_encoder(const httplib::Request &req, const session &s,
                                                 const session_manager &sessions) {
    if (s.api() == "anthropic.messages")
        return anthropic_session_encoder(s, sessions.shutting_down());
    if (s.api() == "openai.responses") return responses_encoder(s);
    if (s.api() == "ollama.chat" || s.api() == "ollama.generate") return ollama_reattach_encoder(s);
    const bool usage =
        req.has_param("include_usage") && req.get_param_value("include_usage") == "true";
    return openai_session_encoder(s, session_is_chat(s), usage);
}

}  // namespace

void register_session_routes(http_router &svr, session_manager &sessions,
                             std::shared_ptr<const session_access> access) {
    svr.Get(R"(/v1/sessions/([A-Za-z0-9_\-]+))",
            [&sessions, access](const httplib::Request &req, httplib::Response &res) {
                bool interrupted = false;
                auto s           = find_or_404(sessions, *access, req, res, interrupted);
                if (!s) return;
                set_session_header(res, s->id());
                res.set_content(session_state_body(*s, interrupted, sessions.placements(s->id())),
                                "application/json");
            });
    svr.Get(R"(/v1/sessions/([A-Za-z0-9_\-]+)/events)",
            [&sessions, access](const httplib::Request &req, httplib::Response &res) {
                bool interrupted = false;
                auto s           = find_or_404(sessions, *access, req, res, interrupted);
                if (!s) return;
                size_t cursor = 0;
                std::string err;
                if (!resume_cursor(req, s->id(), cursor, err))
                    return send_error(res, api_dialect::OPENAI, bad_request(err, "Last-Event-ID"));
                set_session_header(res, s->id());
                // Each session in its own API's stream format (the journal records which).
                // A re-attached reader never cancels the generation when it goes away.
                serve_session_stream(req, res, s, reattach_encoder(req, *s, sessions), cursor,
                                     false);
            });
    svr.Post(R"(/v1/sessions/([A-Za-z0-9_\-]+)/cancel)",
             [&sessions, access](const httplib::Request &req, httplib::Response &res) {
                 bool interrupted = false;
                 auto s           = find_or_404(sessions, *access, req, res, interrupted);
                 if (!s) return;
                 cancel_and_wait(*s);
                 set_session_header(res, s->id());
                 res.set_content(session_state_body(*s, interrupted), "application/json");
             });
}

}  // namespace sf
