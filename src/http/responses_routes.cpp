#include "http/responses_routes.h"

#include <cpp-httplib/httplib.h>

#include <chrono>

#include "api/responses_request.h"
#include "api/responses_response.h"
#include "chat/output_parser.h"
#include "http/route_util.h"
#include "http/session_ids.h"

namespace sf {

namespace {

using namespace std::chrono_literals;

void send_error(httplib::Response &res, const api_error &e) {
    res.status = e.status;
    res.set_content(openai_error_body(e), "application/json");
}

// One response in progress.
struct responses_run {
    std::shared_ptr<session> s;
    std::unique_ptr<chat_output_parser> parser;
    std::unique_ptr<responses_builder> builder;
    size_t cursor                                    = 0;
    bool started                                     = false;
    bool done                                        = false;
    std::chrono::steady_clock::time_point last_check = std::chrono::steady_clock::now();
};

// Reads what arrived (up to 100 ms) and returns the SSE frames it makes; `client_left` when
// the client went away. Sets r.done once the response ended.
std::string step(responses_run &r, const httplib::Request &req, bool &client_left) {
    std::string out;
    if (!r.started) {
        r.started = true;
        out += r.builder->start();
    }
    std::vector<session_event> evs;
    std::optional<session_event> fin;
    bool got    = r.s->read(r.cursor, evs, fin, 100ms);
    client_left = client_gone(req, r.last_check);
    if (client_left || !got) return out;
    for (const auto &ev : evs) {
        ++r.cursor;
        if (!ev.text.empty()) out += r.builder->apply(r.parser->push(ev.text));
    }
    if (!fin) return out;
    const bool failed =
        fin->reason == finish_reason::ERROR || fin->reason == finish_reason::CANCELLED;
    if (!failed) out += r.builder->apply(r.parser->push(fin->text));
    out += r.builder->apply(r.parser->finish());
    out += r.builder->finish(fin->reason,
                             failed ? (fin->error.empty() ? "generation failed" : fin->error) : "",
                             r.s->prompt_tokens(), fin->cached_tokens, fin->completion_tokens);
    r.done = true;
    return out;
}

void handle(const httplib::Request &req, const std::string &body, httplib::Response &res,
            const openai_route_context &rc) {
    generate_request greq;
    responses_options opts;
    api_error err;
    if (!parse_responses_request(body, greq, opts, err)) return send_error(res, err);
    if (!apply_priority(req, rc.priority, greq, res, err)) return send_error(res, err);
    if (!rc.model_ok(greq.model)) {
        return send_error(res, api_error{404, "invalid_request_error",
                                         "the model '" + greq.model + "' does not exist", "model",
                                         "model_not_found"});
    }
    if (greq.model.empty()) greq.model = rc.model_id;
    greq.api = "openai.responses";  // journaled (re-attach replays it as chat chunks)
    start_error serr;
    auto r = std::make_shared<responses_run>();
    r->s   = rc.sessions->start(greq, serr);
    if (!r->s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, from_start_error(serr));
    }
    set_session_header(res, r->s->id());
    r->parser =
        std::make_unique<chat_output_parser>(r->s->parse_spec(), "call_" + r->s->id() + "_");
    r->builder = std::make_unique<responses_builder>("resp_" + r->s->id(), greq.model, unix_now(),
                                                     opts.echo);
    if (opts.stream) {
        return serve_stream(
            res, "text/event-stream", r->s,
            [r, &req](httplib::DataSink &sink) {
                bool left          = false;
                std::string frames = step(*r, req, left);
                if (left) return false;
                if (!frames.empty() && !sink.write(frames.data(), frames.size())) return false;
                if (r->done) sink.done();
                return true;
            },
            [r] { return r->done; });
    }
    while (!r->done) {
        bool left = false;
        step(*r, req, left);
        if (left) {
            r->s->cancel();
            return;
        }
    }
    auto obj = r->builder->response();
    if (obj["status"] == "failed") {
        return send_error(res, api_error{rc.sessions->shutting_down() ? 503 : 500, "server_error",
                                         obj["error"]["message"].get<std::string>(), "", ""});
    }
    res.set_content(obj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                    "application/json");
}

}  // namespace

void register_responses_routes(httplib::Server &svr, openai_route_context ctx) {
    auto rc = std::make_shared<const openai_route_context>(std::move(ctx));
    svr.Post("/v1/responses", [rc](const httplib::Request &req, httplib::Response &res,
                                   const httplib::ContentReader &reader) {
        std::string body;
        if (!read_body(reader, rc->max_body_bytes, body)) {
            return send_error(
                res, api_error{413, "invalid_request_error", "the request body is too large", "",
                               "request_too_large"});
        }
        handle(req, body, res, *rc);
    });
}

}  // namespace sf
