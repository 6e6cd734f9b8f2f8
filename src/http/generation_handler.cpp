#include "http/generation_handler.h"

#include <cpp-httplib/httplib.h>

#include "api/common/media_refusal.h"
#include "http/error_reply.h"
#include "http/model_names.h"
#include "http/route_util.h"
#include "http/router.h"
#include "http/session_ids.h"
#include "http/stream_driver.h"

namespace sf {

namespace {

using clock_type = std::chrono::steady_clock;

// Waits for the session's end, collecting its answer. At `limit` tokens the session is
// cancelled and the answer ends there as LENGTH (the cached count as the session has it).
// False (the session cancelled) when the client went away first. What arrived is taken before
// the client is looked at: a session the shutdown ended gets its 503 although the server's stop
// already counts every connection as closed.
bool collect_answer(session &s, const httplib::Request &req, int64_t limit, collected_answer &a) {
    size_t cursor   = 0;
    auto last_check = clock_type::now();
    for (;;) {
        std::vector<session_event> evs;
        std::optional<session_event> fin;
        s.read(cursor, evs, fin, std::chrono::milliseconds(100));
        cursor += evs.size();
        for (const auto &ev : evs) {
            if (!a.first_token) a.first_token = clock_type::now();
            a.text += ev.text;
            a.tokens.push_back(ev.token);
            if (static_cast<int64_t>(a.tokens.size()) < limit) continue;
            s.cancel();
            a.fin                   = session_event{};
            a.fin.reason            = finish_reason::LENGTH;
            a.fin.completion_tokens = static_cast<int32_t>(a.tokens.size());
            a.fin.cached_tokens     = s.cached_tokens();
            return true;
        }
        if (fin) {
            a.text += fin->text;
            a.fin = std::move(*fin);
            return true;
        }
        if (client_gone(req, last_check)) {
            s.cancel();
            return false;
        }
    }
}

}  // namespace

void register_body_route(
    http_router &svr, const std::string &pattern, std::shared_ptr<const route_context> rc,
    api_dialect errors,
    std::function<void(const httplib::Request &, const std::string &, httplib::Response &)> fn) {
    svr.Post(pattern, [rc = std::move(rc), errors, fn = std::move(fn)](
                          const httplib::Request &req, httplib::Response &res,
                          const httplib::ContentReader &reader) {
        std::string body;
        if (!read_body(reader, rc->max_body_bytes, body)) {
            return send_error(res, errors,
                              api_error{413, "invalid_request_error",
                                        "the request body is too large", "", "request_too_large"});
        }
        fn(req, body, res);
    });
}

void register_generation_route(http_router &svr, const std::string &pattern,
                               std::shared_ptr<const route_context> rc, dialect_factory make) {
    auto d = make(*rc);  // only for its error shape
    register_body_route(
        svr, pattern, rc, d->errors(),
        [rc, make = std::move(make)](const httplib::Request &req, const std::string &body,
                                     httplib::Response &res) {
            auto dialect = make(*rc);
            serve_generation(req, body, res, *rc, *dialect);
        });
}

bool prepare_generation(const httplib::Request &req, const std::string &body,
                        httplib::Response &res, const route_context &rc, generation_dialect &d,
                        generate_request &greq) {
    api_error err;
    if (!d.parse(body, greq, err) ||
        !apply_priority(req, rc.priority, rc.identity_secret, greq, res, err)) {
        if (!err.media.empty()) {  // an image (or audio, a file): why, in terms of the model
            model_description info;
            const bool known = rc.sessions->model_info(info);
            explain_media_refusal(err, rc.model_id, known ? &info : nullptr);
        }
        send_error(res, d.errors(), err);
        return false;
    }
    std::string why;
    if (!resolve_model(rc, greq.model, res, why, d.ollama_names())) {
        send_error(res, d.errors(),
                   api_error{404, "invalid_request_error", why, "model", "model_not_found"});
        return false;
    }
    return true;
}

void serve_generation(const httplib::Request &req, const std::string &body, httplib::Response &res,
                      const route_context &rc, generation_dialect &d) {
    generate_request greq;
    if (!prepare_generation(req, body, res, rc, d, greq)) return;
    reply_body reply;
    if (d.answer_without_session(greq, reply)) {
        // Ollama's load request (no prompt) loads its model; with keep_alive 0 it unloads it.
        start_error lerr;
        if (!rc.sessions->load_model(greq.model, greq.keep_alive_ms, lerr))
            return send_error(res, d.errors(), d.refusal(lerr));
        return res.set_content(reply.body, reply.content_type);
    }

    start_error serr;
    auto s = rc.sessions->start(greq, serr);
    if (!s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, d.errors(), d.refusal(serr));
    }
    set_session_header(res, s->id());
    api_error err;
    if (!d.accepted(*s, clock_type::now(), err)) {
        s->cancel();
        return send_error(res, d.errors(), err);
    }
    switch (d.mode()) {
        case reply_mode::STREAM:
            return serve_session_stream(req, res, s, d.encoder(*s), 0,
                                        d.cancel_on_disconnect() && !wants_detach(req));
        case reply_mode::AT_ONCE:
            reply = d.body(*s, collected_answer{});
            return res.set_content(reply.body, reply.content_type);
        case reply_mode::WAIT:
            break;
    }
    collected_answer a;
    if (!collect_answer(*s, req, d.token_limit(), a)) return;
    if (a.fin.reason == finish_reason::ERROR || a.fin.reason == finish_reason::CANCELLED)
        return send_error(res, d.errors(), d.failed(a.fin, rc.sessions->shutting_down()));
    reply = d.body(*s, a);
    res.set_content(reply.body, reply.content_type);
}

}  // namespace sf
