#include "http/openai_routes.h"

#include <cpp-httplib/httplib.h>

#include <chrono>

#include "api/openai_request.h"
#include "api/openai_response.h"

namespace sf {

namespace {

using namespace std::chrono_literals;

void send_error(httplib::Response &res, const api_error &e) {
    res.status = e.status;
    res.set_content(openai_error_body(e), "application/json");
}

api_error from_start_error(const start_error &se) {
    api_error e;
    e.message = se.message;
    e.param   = se.param;
    switch (se.type) {
        case start_error::kind::INVALID_REQUEST:
            e.status = 400;
            break;
        case start_error::kind::CONTEXT_LENGTH:
            e.status = 400;
            e.code   = "context_length_exceeded";
            break;
        case start_error::kind::UNAVAILABLE:
            e.status = 503;
            e.type   = "server_error";
            e.code   = "service_unavailable";
            break;
        case start_error::kind::OVERLOADED:
            e.status = 429;
            e.type   = "rate_limit_error";
            e.code   = "overloaded";
            break;
        case start_error::kind::INTERNAL:
            e.status = 500;
            e.type   = "server_error";
            break;
    }
    return e;
}

// Reads the whole body through a content reader, so httplib applies no form-urlencoded
// parsing or limit to it: bodies are JSON whatever Content-Type the client sent.
bool read_body(const httplib::ContentReader &reader, size_t max_bytes, std::string &body) {
    bool too_large = false;
    reader([&](const char *data, size_t len) {
        if (body.size() + len > max_bytes) {
            too_large = true;
            return false;
        }
        body.append(data, len);
        return true;
    });
    return !too_large;
}

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The state one streamed response carries across content-provider calls.
struct stream_state {
    std::shared_ptr<session> s;
    openai_meta meta;
    bool chat                                        = true;
    bool include_usage                               = false;
    bool started                                     = false;
    bool done                                        = false;
    size_t cursor                                    = 0;
    std::chrono::steady_clock::time_point last_check = std::chrono::steady_clock::now();
};

// True when the client went away. Checked on a clock, not only when idle: a session that
// keeps producing tokens must notice a gone client too (writes may still succeed for a while
// into the socket buffer).
bool client_gone(const httplib::Request &req, std::chrono::steady_clock::time_point &last_check) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_check < 100ms) return false;
    last_check = now;
    return req.is_connection_closed();
}

bool write_sse(httplib::DataSink &sink, const std::string &data) {
    std::string frame = "data: " + data + "\n\n";
    return sink.write(frame.data(), frame.size());
}

// One step of an SSE stream: waits briefly for events, writes them; false ends the stream.
bool stream_step(stream_state &st, const httplib::Request &req, httplib::DataSink &sink) {
    if (!st.started) {
        st.started = true;
        if (st.chat && !write_sse(sink, openai_chat_chunk(st.meta, nullptr, true, nullptr, false)))
            return false;
    }
    std::vector<session_event> evs;
    std::optional<session_event> fin;
    bool got = st.s->read(st.cursor, evs, fin, 100ms);
    if (client_gone(req, st.last_check)) return false;
    if (!got) return true;
    for (const auto &ev : evs) {
        ++st.cursor;
        if (ev.text.empty()) continue;
        std::string chunk = st.chat ? openai_chat_chunk(st.meta, &ev.text, false, nullptr, false)
                                    : openai_completion_chunk(st.meta, &ev.text, nullptr, false);
        if (!write_sse(sink, chunk)) return false;
    }
    if (!fin) return true;

    st.meta.completion_tokens = fin->completion_tokens;
    st.meta.cached_tokens     = fin->cached_tokens;  // known once the worker placed it
    if (fin->reason == finish_reason::ERROR) {
        // Headers are gone: report in-band, then end the stream cleanly (never hang).
        api_error e{500, "server_error", fin->error.empty() ? "generation failed" : fin->error, "",
                    ""};
        write_sse(sink, openai_error_body(e));
    } else {
        const std::string *tail = fin->text.empty() ? nullptr : &fin->text;
        std::string chunk = st.chat ? openai_chat_chunk(st.meta, tail, false, &fin->reason, false)
                                    : openai_completion_chunk(st.meta, tail, &fin->reason, false);
        if (!write_sse(sink, chunk)) return false;
        if (st.include_usage) {
            std::string usage = st.chat ? openai_chat_chunk(st.meta, nullptr, false, nullptr, true)
                                        : openai_completion_chunk(st.meta, nullptr, nullptr, true);
            if (!write_sse(sink, usage)) return false;
        }
    }
    write_sse(sink, "[DONE]");
    st.done = true;
    sink.done();
    return true;
}

void handle_generation(const httplib::Request &req, const std::string &body, httplib::Response &res,
                       const openai_route_context &rc, bool chat) {
    session_manager &sessions   = *rc.sessions;
    const std::string &model_id = rc.model_id;
    generate_request greq;
    openai_options opts;
    api_error err;
    bool ok = chat ? parse_openai_chat(body, greq, opts, err)
                   : parse_openai_completion(body, greq, opts, err);
    if (!ok) return send_error(res, err);
    priority_headers ph{req.get_header_value("X-Superfluid-Priority"),
                        req.get_header_value("Authorization"), req.get_header_value("x-api-key"),
                        req.get_header_value("User-Agent")};
    if (!resolve_priority(greq.cls_from_body, ph, rc.priority, greq.cls, err))
        return send_error(res, err);
    res.set_header("X-Superfluid-Priority", class_name(greq.cls));
    if (!rc.model_ok(greq.model)) {
        api_error e{404, "invalid_request_error",
                    "the model '" + greq.model + "' does not exist; this server serves '" +
                        model_id + "' (see GET /v1/models)",
                    "model", "model_not_found"};
        return send_error(res, e);
    }
    if (greq.model.empty()) greq.model = model_id;

    start_error serr;
    auto s = sessions.start(greq, serr);
    if (!s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, from_start_error(serr));
    }
    res.set_header("X-Superfluid-Session", s->id());

    openai_meta meta;
    meta.id            = (chat ? "chatcmpl-" : "cmpl-") + s->id();
    meta.model         = greq.model;
    meta.created       = unix_now();
    meta.prompt_tokens = s->prompt_tokens();
    meta.cached_tokens = s->cached_tokens();

    if (opts.stream) {
        auto st           = std::make_shared<stream_state>();
        st->s             = s;
        st->meta          = meta;
        st->chat          = chat;
        st->include_usage = opts.include_usage;
        res.set_header("Cache-Control", "no-cache");
        res.set_chunked_content_provider(
            "text/event-stream",
            [st, &req](size_t, httplib::DataSink &sink) {
                if (st->done) return false;
                bool keep = stream_step(*st, req, sink);
                if (!keep) st->s->cancel();
                return keep;
            },
            [st](bool success) {
                if (!success || !st->done) st->s->cancel();
            });
        return;
    }

    // Non-streaming: collect, watching for a client that gives up waiting.
    std::string text;
    size_t cursor   = 0;
    auto last_check = std::chrono::steady_clock::now();
    for (;;) {
        std::vector<session_event> evs;
        std::optional<session_event> fin;
        bool got = s->read(cursor, evs, fin, 100ms);
        if (client_gone(req, last_check)) {
            s->cancel();
            return;
        }
        if (!got) continue;
        for (const auto &ev : evs) text += ev.text;
        cursor += evs.size();
        if (!fin) continue;
        if (fin->reason == finish_reason::ERROR || fin->reason == finish_reason::CANCELLED) {
            // A shutdown is "try again later" (503); a failed engine is a server error (500).
            api_error e{sessions.shutting_down() ? 503 : 500, "server_error",
                        fin->error.empty() ? "generation failed" : fin->error, "", ""};
            return send_error(res, e);
        }
        text += fin->text;
        meta.completion_tokens = fin->completion_tokens;
        meta.cached_tokens     = fin->cached_tokens;
        res.set_content(chat ? openai_chat_response(meta, text, fin->reason)
                             : openai_completion_response(meta, text, fin->reason),
                        "application/json");
        return;
    }
}

}  // namespace

void register_openai_routes(httplib::Server &svr, openai_route_context ctx) {
    auto rc = std::make_shared<const openai_route_context>(std::move(ctx));
    for (bool chat : {true, false}) {
        svr.Post(chat ? "/v1/chat/completions" : "/v1/completions",
                 [rc, chat](const httplib::Request &req, httplib::Response &res,
                            const httplib::ContentReader &reader) {
                     std::string body;
                     if (!read_body(reader, rc->max_body_bytes, body)) {
                         api_error e{413, "invalid_request_error", "the request body is too large",
                                     "", "request_too_large"};
                         return send_error(res, e);
                     }
                     handle_generation(req, body, res, *rc, chat);
                 });
    }
}

}  // namespace sf
