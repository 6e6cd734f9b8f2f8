#include "http/openai_routes.h"

#include <cpp-httplib/httplib.h>

#include <chrono>

#include "api/openai_request.h"
#include "api/openai_response.h"
#include "http/route_util.h"

namespace sf {

namespace {

using namespace std::chrono_literals;

void send_error(httplib::Response &res, const api_error &e) {
    res.status = e.status;
    res.set_content(openai_error_body(e), "application/json");
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
    if (!apply_priority(req, rc.priority, greq, res, err)) return send_error(res, err);
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
        return serve_stream(
            res, "text/event-stream", s,
            [st, &req](httplib::DataSink &sink) { return stream_step(*st, req, sink); },
            [st] { return st->done; });
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
