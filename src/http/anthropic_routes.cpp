#include "http/anthropic_routes.h"

#include <cpp-httplib/httplib.h>

#include "api/anthropic/anthropic_request.h"
#include "api/anthropic/anthropic_response.h"
#include "api/anthropic/anthropic_stream_encoder.h"
#include "http/error_reply.h"
#include "http/model_names.h"
#include "http/route_util.h"
#include "http/router.h"
#include "http/session_ids.h"
#include "http/stream_driver.h"

namespace sf {

namespace {

using namespace std::chrono_literals;

// tool_use ids of a session's answer: unique per session, the same for every reader.
std::string tool_use_id_prefix(const session &s) {
    return "toolu_" + s.id().substr(5) + "_";
}

// Parses and checks a body shared by both routes; false when `res` holds the error.
bool prepare(const httplib::Request &req, const std::string &body, bool count_only,
             const anthropic_route_context &rc, generate_request &greq, anthropic_options &opts,
             httplib::Response &res) {
    api_error err;
    if (!parse_anthropic_messages(body, count_only, greq, opts, err)) {
        send_error(res, api_dialect::ANTHROPIC, err);
        return false;
    }
    if (!apply_priority(req, rc.priority, rc.identity_secret, greq, res, err)) {
        send_error(res, api_dialect::ANTHROPIC, err);
        return false;
    }
    std::string why;
    if (!resolve_model(rc, greq.model, res, why)) {
        send_error(res, api_dialect::ANTHROPIC, api_error{404, "", why, "model", ""});
        return false;
    }
    return true;
}

void handle_messages(const httplib::Request &req, const std::string &body, httplib::Response &res,
                     const anthropic_route_context &rc) {
    generate_request greq;
    anthropic_options opts;
    if (!prepare(req, body, false, rc, greq, opts, res)) return;
    greq.api         = "anthropic.messages";  // journaled: re-attach replays Anthropic events
    greq.client_meta = anthropic_client_meta(opts.stop_sequences);
    start_error serr;
    auto s = rc.sessions->start(greq, serr);
    if (!s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, api_dialect::ANTHROPIC, anthropic_refusal(serr));
    }
    set_session_header(res, s->id());
    anthropic_meta meta = anthropic_session_meta(*s);
    meta.model          = greq.model;
    if (opts.stream) {
        // Detached (X-Superfluid-Detach): a client going away does not cancel.
        auto enc = std::make_unique<anthropic_stream_encoder>(
            meta, std::make_unique<chat_output_parser>(s->parse_spec(), tool_use_id_prefix(*s)),
            opts.stop_sequences, rc.sessions->shutting_down());
        return serve_session_stream(req, res, s, std::move(enc), 0, !wants_detach(req));
    }

    std::string text;
    session_event fin;
    if (!wait_for_session(*s, req, text, fin)) return;
    if (fin.reason == finish_reason::ERROR || fin.reason == finish_reason::CANCELLED) {
        return send_error(res, api_dialect::ANTHROPIC,
                          api_error{rc.sessions->shutting_down() ? 503 : 500, "",
                                    fin.error.empty() ? "generation failed" : fin.error, "", ""});
    }
    chat_output_parser parser(s->parse_spec(), tool_use_id_prefix(*s));
    parser.push(text);
    parser.finish();
    meta.output_tokens = fin.completion_tokens;
    meta.cached_tokens = fin.cached_tokens;
    std::string stop_sequence;
    const auto reason = anthropic_stop_reason(fin, !parser.message().tool_calls.empty(),
                                              opts.stop_sequences, stop_sequence);
    res.set_content(anthropic_message_response(meta, parser.message(), reason, stop_sequence),
                    "application/json");
}

void handle_count_tokens(const httplib::Request &req, const std::string &body,
                         httplib::Response &res, const anthropic_route_context &rc) {
    generate_request greq;
    anthropic_options opts;
    if (!prepare(req, body, true, rc, greq, opts, res)) return;
    int32_t n = 0;
    start_error serr;
    if (!rc.sessions->count_prompt_tokens(greq, n, serr))
        return send_error(res, api_dialect::ANTHROPIC, anthropic_refusal(serr));
    res.set_content(R"({"input_tokens":)" + std::to_string(n) + "}", "application/json");
}

}  // namespace

anthropic_meta anthropic_session_meta(const session &s) {
    return anthropic_meta{"msg_" + s.id().substr(5), s.model(), s.prompt_tokens(), 0, 0};
}

void stream_anthropic_session(const httplib::Request &req, httplib::Response &res,
                              std::shared_ptr<session> s, size_t cursor, bool shutting_down) {
    auto enc = std::make_unique<anthropic_stream_encoder>(
        anthropic_session_meta(*s),
        std::make_unique<chat_output_parser>(s->parse_spec(), tool_use_id_prefix(*s)),
        anthropic_stop_sequences(s->client_meta()), shutting_down);
    serve_session_stream(req, res, std::move(s), std::move(enc), cursor, false);
}

void register_anthropic_routes(http_router &svr, anthropic_route_context ctx) {
    auto rc       = std::make_shared<const anthropic_route_context>(std::move(ctx));
    using handler = void (*)(const httplib::Request &, const std::string &, httplib::Response &,
                             const anthropic_route_context &);
    for (auto [path, fn] : {std::pair<const char *, handler>{"/v1/messages", handle_messages},
                            {"/v1/messages/count_tokens", handle_count_tokens}}) {
        svr.Post(path, [rc, fn = fn](const httplib::Request &req, httplib::Response &res,
                                     const httplib::ContentReader &reader) {
            std::string body;
            if (!read_body(reader, rc->max_body_bytes, body))
                return send_error(res, api_dialect::ANTHROPIC,
                                  api_error{413, "", "the request body is too large", "", ""});
            fn(req, body, res, *rc);
        });
    }
}

}  // namespace sf
