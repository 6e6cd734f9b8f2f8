#include "http/openai_routes.h"

#include <cpp-httplib/httplib.h>

#include "api/openai/openai_error.h"
#include "api/openai/openai_request.h"
#include "api/openai/openai_response.h"
#include "api/openai/openai_stream.h"
#include "http/error_reply.h"
#include "http/model_names.h"
#include "http/route_util.h"
#include "http/router.h"
#include "http/session_ids.h"
#include "http/stream_driver.h"

namespace sf {

namespace {

// Tool call ids of a session's answer: unique per session, the same for every reader.
std::string tool_call_id_prefix(const session &s) {
    return "call_" + s.id() + "_";
}

void handle_generation(const httplib::Request &req, const std::string &body, httplib::Response &res,
                       const openai_route_context &rc, bool chat) {
    session_manager &sessions = *rc.sessions;
    generate_request greq;
    openai_options opts;
    api_error err;
    bool ok = chat ? parse_openai_chat(body, greq, opts, err)
                   : parse_openai_completion(body, greq, opts, err);
    if (!ok) return send_error(res, api_dialect::OPENAI, err);
    if (!apply_priority(req, rc.priority, rc.identity_secret, greq, res, err))
        return send_error(res, api_dialect::OPENAI, err);
    std::string why;
    if (!resolve_model(rc, greq.model, res, why)) {
        return send_error(res, api_dialect::OPENAI,
                          api_error{404, "invalid_request_error", why, "model", "model_not_found"});
    }

    start_error serr;
    auto s = sessions.start(greq, serr);
    if (!s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, api_dialect::OPENAI, openai_refusal(serr));
    }
    set_session_header(res, s->id());

    openai_meta meta = openai_session_meta(*s, chat);
    meta.model       = greq.model;

    if (opts.stream) {
        // Detached (X-Superfluid-Detach): a client going away does not cancel.
        stream_openai_session(req, res, s, meta, chat, opts.include_usage, 0, !wants_detach(req));
        return;
    }

    // Non-streaming: collect, watching for a client that gives up waiting.
    std::string text;
    session_event fin;
    if (!wait_for_session(*s, req, text, fin)) return;
    if (fin.reason == finish_reason::ERROR || fin.reason == finish_reason::CANCELLED) {
        // A shutdown is "try again later" (503); a failed engine is a server error (500).
        api_error e{sessions.shutting_down() ? 503 : 500, "server_error",
                    fin.error.empty() ? "generation failed" : fin.error, "", ""};
        return send_error(res, api_dialect::OPENAI, e);
    }
    meta.completion_tokens = fin.completion_tokens;
    meta.cached_tokens     = fin.cached_tokens;  // known once the worker placed it
    meta.draft_tokens      = fin.draft_tokens;
    meta.draft_accepted    = fin.draft_accepted;
    if (!chat) {
        res.set_content(openai_completion_response(meta, text, fin.reason), "application/json");
        return;
    }
    chat_output_parser parser(s->parse_spec(), tool_call_id_prefix(*s));
    parser.push(text);
    parser.finish();
    const auto &msg = parser.message();
    res.set_content(openai_chat_message_response(
                        meta, msg, openai_chat_finish_reason(fin.reason, !msg.tool_calls.empty())),
                    "application/json");
}

}  // namespace

openai_meta openai_session_meta(const session &s, bool chat) {
    openai_meta meta;
    meta.id            = (chat ? "chatcmpl-" : "cmpl-") + s.id();
    meta.model         = s.model();
    meta.created       = s.created_unix() > 0 ? s.created_unix() : unix_now();
    meta.prompt_tokens = s.prompt_tokens();
    meta.cached_tokens = s.cached_tokens();
    return meta;
}

void stream_openai_session(const httplib::Request &req, httplib::Response &res,
                           std::shared_ptr<session> s, const openai_meta &meta, bool chat,
                           bool include_usage, size_t cursor, bool cancel_on_disconnect) {
    auto parser =
        chat ? std::make_unique<chat_output_parser>(s->parse_spec(), tool_call_id_prefix(*s))
             : nullptr;
    auto enc = std::make_unique<openai_stream_encoder>(meta, std::move(parser), include_usage);
    serve_session_stream(req, res, std::move(s), std::move(enc), cursor, cancel_on_disconnect);
}

void register_openai_routes(http_router &svr, openai_route_context ctx) {
    auto rc = std::make_shared<const openai_route_context>(std::move(ctx));
    for (bool chat : {true, false}) {
        svr.Post(chat ? "/v1/chat/completions" : "/v1/completions",
                 [rc, chat](const httplib::Request &req, httplib::Response &res,
                            const httplib::ContentReader &reader) {
                     std::string body;
                     if (!read_body(reader, rc->max_body_bytes, body)) {
                         api_error e{413, "invalid_request_error", "the request body is too large",
                                     "", "request_too_large"};
                         return send_error(res, api_dialect::OPENAI, e);
                     }
                     handle_generation(req, body, res, *rc, chat);
                 });
    }
}

}  // namespace sf
