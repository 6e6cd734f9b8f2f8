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
    std::unique_ptr<chat_output_parser> parser;  // chat: text → content/reasoning/tool deltas
    openai_meta meta;
    bool chat                                        = true;
    bool include_usage                               = false;
    bool started                                     = false;
    bool done                                        = false;
    size_t cursor                                    = 0;
    std::chrono::steady_clock::time_point last_check = std::chrono::steady_clock::now();
};

bool write_sse(httplib::DataSink &sink, const std::string &data) {
    return write_sse_event(sink, "", data);
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
        if (st.chat) {
            for (const auto &d : st.parser->push(ev.text))
                if (!write_sse(sink, openai_chat_delta_chunk(st.meta, d))) return false;
        } else if (!write_sse(sink, openai_completion_chunk(st.meta, &ev.text, nullptr, false))) {
            return false;
        }
    }
    if (!fin) return true;

    st.meta.completion_tokens = fin->completion_tokens;
    if (fin->reason == finish_reason::ERROR) {
        // Headers are gone: report in-band, then end the stream cleanly (never hang).
        api_error e{500, "server_error", fin->error.empty() ? "generation failed" : fin->error, "",
                    ""};
        write_sse(sink, openai_error_body(e));
    } else if (st.chat) {
        auto deltas = st.parser->push(fin->text);
        for (auto &d : st.parser->finish()) deltas.push_back(std::move(d));
        for (const auto &d : deltas)
            if (!write_sse(sink, openai_chat_delta_chunk(st.meta, d))) return false;
        const char *reason =
            openai_chat_finish_reason(fin->reason, !st.parser->message().tool_calls.empty());
        if (!write_sse(sink, openai_chat_finish_chunk(st.meta, reason))) return false;
        if (st.include_usage &&
            !write_sse(sink, openai_chat_chunk(st.meta, nullptr, false, nullptr, true)))
            return false;
    } else {
        const std::string *tail = fin->text.empty() ? nullptr : &fin->text;
        if (!write_sse(sink, openai_completion_chunk(st.meta, tail, &fin->reason, false)))
            return false;
        if (st.include_usage &&
            !write_sse(sink, openai_completion_chunk(st.meta, nullptr, nullptr, true)))
            return false;
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
    if (!resolve_priority(greq.cls_from_body, priority_headers_of(req), rc.priority, greq.cls, err))
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
        return send_error(res, openai_start_error(serr));
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
        if (chat)
            st->parser =
                std::make_unique<chat_output_parser>(s->parse_spec(), "call_" + s->id() + "_");
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
    session_event fin;
    if (!wait_for_session(*s, req, text, fin)) return;
    if (fin.reason == finish_reason::ERROR || fin.reason == finish_reason::CANCELLED) {
        // A shutdown is "try again later" (503); a failed engine is a server error (500).
        api_error e{sessions.shutting_down() ? 503 : 500, "server_error",
                    fin.error.empty() ? "generation failed" : fin.error, "", ""};
        return send_error(res, e);
    }
    meta.completion_tokens = fin.completion_tokens;
    if (!chat) {
        res.set_content(openai_completion_response(meta, text, fin.reason), "application/json");
        return;
    }
    chat_output_parser parser(s->parse_spec(), "call_" + s->id() + "_");
    parser.push(text);
    parser.finish();
    const auto &msg = parser.message();
    res.set_content(openai_chat_message_response(
                        meta, msg, openai_chat_finish_reason(fin.reason, !msg.tool_calls.empty())),
                    "application/json");
}

}  // namespace

void register_openai_routes(httplib::Server &svr, openai_route_context ctx) {
    auto rc = std::make_shared<const openai_route_context>(std::move(ctx));
    for (bool chat : {true, false}) {
        svr.Post(chat ? "/v1/chat/completions" : "/v1/completions",
                 [rc, chat](const httplib::Request &req, httplib::Response &res,
                            const httplib::ContentReader &reader) {
                     std::string body;
                     if (!read_request_body(reader, rc->max_body_bytes, body)) {
                         api_error e{413, "invalid_request_error", "the request body is too large",
                                     "", "request_too_large"};
                         return send_error(res, e);
                     }
                     handle_generation(req, body, res, *rc, chat);
                 });
    }
}

}  // namespace sf
