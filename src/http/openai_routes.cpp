#include "http/openai_routes.h"

#include <cpp-httplib/httplib.h>

#include <chrono>

#include "api/openai_request.h"
#include "api/openai_response.h"
#include "http/model_names.h"
#include "http/route_util.h"
#include "http/session_ids.h"

namespace sf {

namespace {

using namespace std::chrono_literals;

void send_error(httplib::Response &res, const api_error &e) {
    res.status = e.status;
    res.set_content(openai_error_body(e), "application/json");
}

// Tool call ids of a session's answer: unique per session, the same for every reader.
std::string tool_call_id_prefix(const session &s) {
    return "call_" + s.id() + "_";
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
    size_t first_cursor                              = 0;  // > 0: a re-attached reader
    std::chrono::steady_clock::time_point last_check = std::chrono::steady_clock::now();
};

// One SSE frame; `id` (empty: none) lets a client re-attach after it with Last-Event-ID.
bool write_sse(httplib::DataSink &sink, const std::string &data, const std::string &id = "") {
    std::string frame = (id.empty() ? "" : "id: " + id + "\n") + "data: " + data + "\n\n";
    return sink.write(frame.data(), frame.size());
}

// One step of an SSE stream: waits briefly for events, writes them; false ends the stream.
bool stream_step(stream_state &st, const httplib::Request &req, httplib::DataSink &sink) {
    if (!st.started) {
        st.started = true;
        if (st.chat && st.first_cursor == 0 &&
            !write_sse(sink, openai_chat_chunk(st.meta, nullptr, true, nullptr, false)))
            return false;
        if (st.chat && st.first_cursor > 0) {
            // A re-attached reader: the parser catches up on the text the client already has.
            std::vector<session_event> seen;
            std::optional<session_event> ignored;
            st.s->read(0, seen, ignored, 0ms);
            for (size_t i = 0; i < seen.size() && i < st.first_cursor; ++i)
                st.parser->push(seen[i].text);
        }
    }
    std::vector<session_event> evs;
    std::optional<session_event> fin;
    bool got = st.s->read(st.cursor, evs, fin, 100ms);
    if (client_gone(req, st.last_check)) return false;
    if (!got) return true;
    for (const auto &ev : evs) {
        ++st.cursor;
        if (ev.text.empty()) continue;
        const std::string id = sse_event_id(st.s->id(), ev.index);
        if (!st.chat) {
            if (!write_sse(sink, openai_completion_chunk(st.meta, &ev.text, nullptr, false), id))
                return false;
            continue;
        }
        // The token's id goes on the last chunk it completes (a re-attach resumes after it).
        const auto deltas = st.parser->push(ev.text);
        for (size_t i = 0; i < deltas.size(); ++i) {
            if (!write_sse(sink, openai_chat_delta_chunk(st.meta, deltas[i]),
                           i + 1 == deltas.size() ? id : ""))
                return false;
        }
    }
    if (!fin) return true;
    // A re-attached reader that already saw the final chunk (its id is the token count).
    const size_t final_index = static_cast<size_t>(std::max(0, fin->completion_tokens));
    if (st.first_cursor > final_index) {
        write_sse(sink, "[DONE]");
        st.done = true;
        sink.done();
        return true;
    }

    st.meta.completion_tokens = fin->completion_tokens;
    st.meta.cached_tokens     = fin->cached_tokens;  // known once the worker placed it
    st.meta.draft_tokens      = fin->draft_tokens;
    st.meta.draft_accepted    = fin->draft_accepted;
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
        if (!write_sse(sink, openai_chat_finish_chunk(st.meta, reason),
                       sse_event_id(st.s->id(), final_index)))
            return false;
        if (st.include_usage &&
            !write_sse(sink, openai_chat_chunk(st.meta, nullptr, false, nullptr, true)))
            return false;
    } else {
        const std::string *tail = fin->text.empty() ? nullptr : &fin->text;
        std::string chunk       = openai_completion_chunk(st.meta, tail, &fin->reason, false);
        if (!write_sse(sink, chunk, sse_event_id(st.s->id(), final_index))) return false;
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
    session_manager &sessions = *rc.sessions;
    generate_request greq;
    openai_options opts;
    api_error err;
    bool ok = chat ? parse_openai_chat(body, greq, opts, err)
                   : parse_openai_completion(body, greq, opts, err);
    if (!ok) return send_error(res, err);
    if (!apply_priority(req, rc.priority, rc.identity_secret, greq, res, err))
        return send_error(res, err);
    std::string why;
    if (!resolve_model(rc, greq.model, res, why)) {
        return send_error(res,
                          api_error{404, "invalid_request_error", why, "model", "model_not_found"});
    }

    start_error serr;
    auto s = sessions.start(greq, serr);
    if (!s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, from_start_error(serr));
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
        return send_error(res, e);
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
    auto st           = std::make_shared<stream_state>();
    st->s             = std::move(s);
    st->meta          = meta;
    st->chat          = chat;
    st->include_usage = include_usage;
    st->cursor        = cursor;
    st->first_cursor  = cursor;
    if (chat)
        st->parser =
            std::make_unique<chat_output_parser>(st->s->parse_spec(), tool_call_id_prefix(*st->s));
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [st, &req, cancel_on_disconnect](size_t, httplib::DataSink &sink) {
            if (st->done) return false;
            bool keep = stream_step(*st, req, sink);
            if (!keep && cancel_on_disconnect) st->s->cancel();
            return keep;
        },
        [st, cancel_on_disconnect](bool success) {
            if ((!success || !st->done) && cancel_on_disconnect) st->s->cancel();
        });
}

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
