#include "http/ollama_routes.h"

#include <cpp-httplib/httplib.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "api/ollama/ollama_request.h"
#include "api/ollama/ollama_response.h"
#include "api/ollama/ollama_stream_encoder.h"
#include "chat/output_parser.h"
#include "http/error_reply.h"
#include "http/model_names.h"
#include "http/route_util.h"
#include "http/router.h"
#include "http/session_ids.h"
#include "http/stream_driver.h"

namespace sf {

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr const char *k_ndjson = "application/x-ndjson";

int64_t ns_between(clock_type::time_point a, clock_type::time_point b) {
    return b > a ? std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count() : 0;
}

// One answer in progress: the session, its clocks, and where the reader is.
struct ollama_run {
    std::shared_ptr<session> s;
    std::string model;
    bool chat = true;
    ollama_options opts;
    clock_type::time_point t_start, t_accepted, t_first;
    bool got_first = false;
    size_t cursor  = 0;
    // Head-side token cap from options.num_ctx smaller than the server's context.
    int64_t limit                     = INT64_MAX;
    bool hit_limit                    = false;
    clock_type::time_point last_check = clock_type::now();
    std::vector<token_id> generated;             // generate: the answer's tokens for `context`
    std::unique_ptr<chat_output_parser> parser;  // templated requests: reasoning, tool calls
};

// Routes text through the chat layer's parser (when there is one) into `d`.
void add_text(ollama_run &r, const std::string &text, ollama_delta &d, bool final) {
    if (!r.parser) {
        d.content += text;
        return;
    }
    auto deltas = r.parser->push(text);
    if (final) {
        auto rest = r.parser->finish();
        deltas.insert(deltas.end(), rest.begin(), rest.end());
    }
    for (const auto &x : deltas) {
        if (x.type == chat_delta::kind::REASONING) d.thinking += x.text;
        if (x.type == chat_delta::kind::CONTENT) d.content += x.text;
    }
    // Ollama sends a tool call whole (arguments as an object), once the answer is complete.
    if (final) d.tool_calls = r.parser->message().tool_calls;
}

// How an answer ended, once it did.
struct run_end {
    std::string reason;  // "stop" | "length"
    std::string error;   // set when generation failed
    int32_t completion_tokens = 0;
    int32_t cached_tokens     = 0;  // prompt tokens reused from the prefix cache
};

// Reads what arrived (waiting up to 100 ms) into `d`. Returns false when the client went away.
bool poll(ollama_run &r, const httplib::Request &req, ollama_delta &d,
          std::optional<run_end> &end) {
    std::vector<session_event> evs;
    std::optional<session_event> fin;
    bool got = r.s->read(r.cursor, evs, fin, 100ms);
    if (client_gone(req, r.last_check)) return false;
    if (!got) return true;
    for (const auto &ev : evs) {
        ++r.cursor;
        if (r.hit_limit) continue;
        if (!r.got_first) {
            r.got_first = true;
            r.t_first   = clock_type::now();
        }
        add_text(r, ev.text, d, false);
        if (!r.chat) r.generated.push_back(ev.token);
        if (static_cast<int64_t>(r.cursor) >= r.limit) {
            r.hit_limit = true;  // num_ctx reached: stop here, as Ollama's context would
            r.s->cancel();
        }
    }
    if (r.hit_limit) {
        add_text(r, "", d, true);
        end = run_end{"length", "", static_cast<int32_t>(r.limit), r.s->cached_tokens()};
        return true;
    }
    if (!fin) return true;
    if (fin->reason == finish_reason::ERROR || fin->reason == finish_reason::CANCELLED) {
        end = run_end{"", fin->error.empty() ? "generation failed" : fin->error, 0};
        return true;
    }
    add_text(r, fin->text, d, true);
    end = run_end{fin->reason == finish_reason::LENGTH ? "length" : "stop", "",
                  fin->completion_tokens, fin->cached_tokens};
    return true;
}

// The final line's fields from the run's clocks and counts. As in Ollama, prompt_eval_count
// counts only the prompt tokens evaluated (the prefix cache supplied the rest) and
// prompt_eval_duration is the time until the first token, which is spent on those; `context`
// is still the whole exchange.
ollama_done make_done(ollama_run &r, const run_end &e) {
    const auto now = clock_type::now();
    ollama_done d;
    d.reason               = e.reason;
    d.stats.total_ns       = ns_between(r.t_start, now);
    d.stats.load_ns        = ns_between(r.t_start, r.t_accepted);
    d.stats.prompt_eval_ns = ns_between(r.t_accepted, r.got_first ? r.t_first : now);
    d.stats.eval_ns        = r.got_first ? ns_between(r.t_first, now) : 0;
    d.stats.prompt_eval_count =
        r.s->prompt_tokens() - std::clamp(e.cached_tokens, 0, r.s->prompt_tokens());
    d.stats.eval_count = e.completion_tokens;
    if (!r.chat) {
        // `context`: this exchange's tokens, to be passed back for a follow-up generate.
        r.generated.insert(r.generated.begin(), r.s->prompt_token_ids().begin(),
                           r.s->prompt_token_ids().end());
        d.context = &r.generated;
    }
    return d;
}

// A load/unload request: nothing to generate, answered at once as Ollama does.
void answer_load(httplib::Response &res, const std::string &model, bool chat,
                 const ollama_options &opts) {
    ollama_done done;
    done.reason     = opts.unload ? "unload" : "load";
    done.with_stats = false;
    std::string body =
        chat ? ollama_chat_line(model, {}, &done) : ollama_generate_line(model, {}, &done);
    res.set_content(opts.stream ? body + "\n" : body, opts.stream ? k_ndjson : "application/json");
}

void handle(const httplib::Request &req, const std::string &body, httplib::Response &res,
            const openai_route_context &rc, bool chat) {
    auto r     = std::make_shared<ollama_run>();
    r->t_start = clock_type::now();
    r->chat    = chat;
    generate_request greq;
    api_error err;
    bool ok = chat ? parse_ollama_chat(body, greq, r->opts, err)
                   : parse_ollama_generate(body, greq, r->opts, err);
    if (!ok) return send_error(res, api_dialect::OLLAMA, err.status, err.message);
    std::string why;
    if (!resolve_model(rc, greq.model, res, why, true))
        return send_error(res, api_dialect::OLLAMA, 404, why);
    r->model = greq.model;
    if (r->opts.load_only) return answer_load(res, greq.model, chat, r->opts);

    if (!apply_priority(req, rc.priority, rc.identity_secret, greq, res, err))
        return send_error(res, api_dialect::OLLAMA, err.status, err.message);

    greq.api         = chat ? "ollama.chat" : "ollama.generate";  // journaled (re-attach format)
    greq.client_meta = ollama_client_meta(greq.is_chat);  // whether a reader parses the text
    start_error serr;
    r->s = rc.sessions->start(greq, serr);
    if (!r->s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, api_dialect::OLLAMA, ollama_refusal_status(serr), serr.message);
    }
    r->t_accepted = clock_type::now();
    if (greq.is_chat)
        r->parser = std::make_unique<chat_output_parser>(r->s->parse_spec(),
                                                         ollama_tool_call_prefix(r->s->id()));
    set_session_header(res, r->s->id());
    if (r->opts.num_ctx > 0) {
        // options.num_ctx below the server's context: the prompt must fit in it, and the
        // answer stops when it is full (Ollama's context would hold no more).
        if (r->s->prompt_tokens() >= r->opts.num_ctx) {
            r->s->cancel();
            return send_error(res, api_dialect::OLLAMA, 400,
                              "the prompt is too long: " + std::to_string(r->s->prompt_tokens()) +
                                  " tokens > " + std::to_string(r->opts.num_ctx - 1) +
                                  " maximum (options.num_ctx)");
        }
        r->limit = r->opts.num_ctx - r->s->prompt_tokens();
    }

    if (r->opts.stream) {
        ollama_stream_meta meta;
        meta.model            = r->model;
        meta.chat             = chat;
        meta.prompt_tokens    = r->s->prompt_tokens();
        meta.prompt_token_ids = r->s->prompt_token_ids();
        meta.limit            = r->limit;
        ollama_stream_clock clock;
        clock.start    = r->t_start;
        clock.accepted = r->t_accepted;
        return serve_session_stream(
            req, res, r->s,
            std::make_unique<ollama_stream_encoder>(std::move(meta), std::move(r->parser), clock),
            0, !wants_detach(req));
    }

    ollama_delta all;
    for (;;) {
        ollama_delta d;
        std::optional<run_end> end;
        if (!poll(*r, req, d, end)) {
            r->s->cancel();
            return;
        }
        all.content += d.content;
        all.thinking += d.thinking;
        all.tool_calls.insert(all.tool_calls.end(), d.tool_calls.begin(), d.tool_calls.end());
        if (!end) continue;
        if (!end->error.empty()) {
            return send_error(res, api_dialect::OLLAMA, rc.sessions->shutting_down() ? 503 : 500,
                              end->error);
        }
        ollama_done done = make_done(*r, *end);
        res.set_content(chat ? ollama_chat_line(r->model, all, &done)
                             : ollama_generate_line(r->model, all, &done),
                        "application/json");
        return;
    }
}

}  // namespace

void register_ollama_routes(http_router &svr, openai_route_context ctx) {
    auto rc = std::make_shared<const openai_route_context>(std::move(ctx));
    for (bool chat : {true, false}) {
        svr.Post(chat ? "/api/chat" : "/api/generate",
                 [rc, chat](const httplib::Request &req, httplib::Response &res,
                            const httplib::ContentReader &reader) {
                     std::string body;
                     if (!read_body(reader, rc->max_body_bytes, body))
                         return send_error(res, api_dialect::OLLAMA, 413,
                                           "the request body is too large");
                     handle(req, body, res, *rc, chat);
                 });
    }
}

}  // namespace sf
