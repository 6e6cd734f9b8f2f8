#include "http/anthropic_routes.h"

#include <cpp-httplib/httplib.h>

#include <regex>

#include "api/anthropic_request.h"
#include "api/anthropic_response.h"
#include "http/model_names.h"
#include "http/route_util.h"
#include "http/session_ids.h"

namespace sf {

namespace {

using namespace std::chrono_literals;

void send_error(httplib::Response &res, const api_error &e) {
    res.status = e.status;
    res.set_content(anthropic_error_body(e), "application/json");
}

api_error anthropic_start_error(const start_error &se) {
    api_error e;
    e.message = se.message;
    e.param   = se.param;
    switch (se.type) {
        case start_error::kind::INVALID_REQUEST:
            e.status = 400;
            break;
        case start_error::kind::CONTEXT_LENGTH: {
            // Anthropic's wording, which agents parse to decide when to compact the context.
            e.status = 400;
            std::smatch m;
            static const std::regex counts(R"((\d+) tokens > (\d+) maximum)");
            if (std::regex_search(se.message, m, counts))
                e.message =
                    "prompt is too long: " + m[1].str() + " tokens > " + m[2].str() + " maximum";
            break;
        }
        case start_error::kind::UNAVAILABLE:
            e.status = 503;
            break;
        case start_error::kind::OVERLOADED:
            e.status = 529;
            break;
        case start_error::kind::INTERNAL:
            e.status = 500;
            break;
    }
    return e;
}

// Parses and checks a body shared by both routes; false when `res` holds the error.
bool prepare(const httplib::Request &req, const std::string &body, bool count_only,
             const anthropic_route_context &rc, generate_request &greq, anthropic_options &opts,
             httplib::Response &res) {
    api_error err;
    if (!parse_anthropic_messages(body, count_only, greq, opts, err)) {
        send_error(res, err);
        return false;
    }
    if (!apply_priority(req, rc.priority, rc.identity_secret, greq, res, err)) {
        send_error(res, err);
        return false;
    }
    std::string why;
    if (!resolve_model(rc, greq.model, res, why)) {
        send_error(res, api_error{404, "", why, "model", ""});
        return false;
    }
    return true;
}

// One streamed message across content-provider calls.
struct stream_state {
    std::shared_ptr<session> s;
    std::unique_ptr<chat_output_parser> parser;
    std::unique_ptr<anthropic_stream> events;
    std::vector<std::string> stops;
    bool shutting_down                               = false;
    bool started                                     = false;
    bool done                                        = false;
    size_t cursor                                    = 0;
    std::chrono::steady_clock::time_point last_check = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
};

bool write_all(stream_state &st, httplib::DataSink &sink,
               const std::vector<anthropic_stream::event> &evs) {
    for (const auto &[name, data] : evs) {
        if (!write_sse_event(sink, name, data)) return false;
        st.last_write = std::chrono::steady_clock::now();
    }
    return true;
}

bool stream_step(stream_state &st, const httplib::Request &req, httplib::DataSink &sink) {
    std::vector<session_event> evs;
    std::optional<session_event> fin;
    bool got = st.s->read(st.cursor, evs, fin, 100ms);
    if (client_gone(req, st.last_check)) return false;
    // Nothing written for a while: keep proxies and clients from timing out a long prefill.
    const bool quiet = std::chrono::steady_clock::now() - st.last_write > 10s;
    if (!st.started && (got || quiet)) {
        // message_start waits for the first token (or the end), which brings the prefix
        // cache's count, so its usage is already the final one, as Anthropic's is. A prefill
        // longer than the keep-alive interval gets it earlier with what is known then
        // (nothing read from the cache yet); message_delta's cumulative usage has the count.
        st.started = true;
        if (!write_all(st, sink, st.events->start(st.s->cached_tokens()))) return false;
    } else if (!got && quiet) {
        return write_all(st, sink, {anthropic_stream::ping()});
    }
    if (!got) return true;
    for (const auto &ev : evs) {
        ++st.cursor;
        for (const auto &d : st.parser->push(ev.text))
            if (!write_all(st, sink, st.events->on_delta(d))) return false;
    }
    if (!fin) return true;
    if (fin->reason == finish_reason::ERROR || fin->reason == finish_reason::CANCELLED) {
        api_error e{st.shutting_down ? 503 : 500, "",
                    fin->error.empty() ? "generation failed" : fin->error, "", ""};
        write_all(st, sink, st.events->fail(e));
    } else {
        auto deltas = st.parser->push(fin->text);
        for (auto &d : st.parser->finish()) deltas.push_back(std::move(d));
        for (const auto &d : deltas)
            if (!write_all(st, sink, st.events->on_delta(d))) return false;
        std::string stop_sequence;
        const auto reason = anthropic_stop_reason(*fin, !st.parser->message().tool_calls.empty(),
                                                  st.stops, stop_sequence);
        if (!write_all(st, sink,
                       st.events->finish(reason, stop_sequence, fin->completion_tokens,
                                         fin->cached_tokens)))
            return false;
    }
    st.done = true;
    sink.done();
    return true;
}

void handle_messages(const httplib::Request &req, const std::string &body, httplib::Response &res,
                     const anthropic_route_context &rc) {
    generate_request greq;
    anthropic_options opts;
    if (!prepare(req, body, false, rc, greq, opts, res)) return;
    greq.api = "anthropic.messages";  // journaled (re-attach replays it as chat chunks)
    start_error serr;
    auto s = rc.sessions->start(greq, serr);
    if (!s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, anthropic_start_error(serr));
    }
    set_session_header(res, s->id());
    anthropic_meta meta{"msg_" + s->id().substr(5), greq.model, s->prompt_tokens(), 0, 0};
    const std::string id_prefix = "toolu_" + s->id().substr(5) + "_";

    if (opts.stream) {
        auto st           = std::make_shared<stream_state>();
        st->s             = s;
        st->parser        = std::make_unique<chat_output_parser>(s->parse_spec(), id_prefix);
        st->events        = std::make_unique<anthropic_stream>(meta);
        st->stops         = opts.stop_sequences;
        st->shutting_down = rc.sessions->shutting_down();
        res.set_header("Cache-Control", "no-cache");
        // Detached (X-Superfluid-Detach): a client going away does not cancel.
        const bool cancel = !wants_detach(req);
        res.set_chunked_content_provider(
            "text/event-stream",
            [st, &req, cancel](size_t, httplib::DataSink &sink) {
                if (st->done) return false;
                bool keep = stream_step(*st, req, sink);
                if (!keep && cancel) st->s->cancel();
                return keep;
            },
            [st, cancel](bool success) {
                if ((!success || !st->done) && cancel) st->s->cancel();
            });
        return;
    }

    std::string text;
    session_event fin;
    if (!wait_for_session(*s, req, text, fin)) return;
    if (fin.reason == finish_reason::ERROR || fin.reason == finish_reason::CANCELLED) {
        return send_error(res,
                          api_error{rc.sessions->shutting_down() ? 503 : 500, "",
                                    fin.error.empty() ? "generation failed" : fin.error, "", ""});
    }
    chat_output_parser parser(s->parse_spec(), id_prefix);
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
        return send_error(res, anthropic_start_error(serr));
    res.set_content(R"({"input_tokens":)" + std::to_string(n) + "}", "application/json");
}

}  // namespace

void register_anthropic_routes(httplib::Server &svr, anthropic_route_context ctx) {
    auto rc       = std::make_shared<const anthropic_route_context>(std::move(ctx));
    using handler = void (*)(const httplib::Request &, const std::string &, httplib::Response &,
                             const anthropic_route_context &);
    for (auto [path, fn] : {std::pair<const char *, handler>{"/v1/messages", handle_messages},
                            {"/v1/messages/count_tokens", handle_count_tokens}}) {
        svr.Post(path, [rc, fn = fn](const httplib::Request &req, httplib::Response &res,
                                     const httplib::ContentReader &reader) {
            std::string body;
            if (!read_body(reader, rc->max_body_bytes, body))
                return send_error(res, api_error{413, "", "the request body is too large", "", ""});
            fn(req, body, res, *rc);
        });
    }
}

}  // namespace sf
