#include "http/responses_routes.h"

#include <cpp-httplib/httplib.h>

#include <chrono>

#include "api/common/json_fields.h"
#include "api/openai/openai_error.h"
#include "api/responses/responses_request.h"
#include "api/responses/responses_response.h"
#include "http/error_reply.h"
#include "http/model_names.h"
#include "http/responses_stream.h"
#include "http/route_util.h"
#include "http/router.h"
#include "http/session_ids.h"
#include "util/log.h"

namespace sf {

namespace {

using json = nlohmann::json;

// One log line per set of tool types not offered to the model (not one per request).
void log_skipped_tools(const std::vector<std::string> &types) {
    std::string list;
    for (const auto &t : types) list += (list.empty() ? "'" : ", '") + t + "'";
    if (!first_sighting("tools:" + list)) return;
    SF_LOG_INFO("responses", "tool types %s skipped: this server runs function and custom tools",
                list.c_str());
}

void send_object(httplib::Response &res, const json &obj) {
    res.set_content(obj.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void handle_create(const httplib::Request &req, const std::string &body, httplib::Response &res,
                   const openai_route_context &rc) {
    generate_request greq;
    responses_options opts;
    api_error err;
    if (!parse_responses_request(body, greq, opts, err))
        return send_error(res, api_dialect::OPENAI, err);
    if (opts.background && !rc.sessions->journaled()) {
        return send_error(res, api_dialect::OPENAI,
                          bad_request("background responses need the token journal; this "
                                      "server runs with --journal off",
                                      "background", "unsupported_parameter"));
    }
    if (!apply_priority(req, rc.priority, rc.identity_secret, greq, res, err))
        return send_error(res, api_dialect::OPENAI, err);
    std::string why;
    if (!resolve_model(rc, greq.model, res, why)) {
        return send_error(res, api_dialect::OPENAI,
                          api_error{404, "invalid_request_error", why, "model", "model_not_found"});
    }
    if (!opts.skipped_tools.empty()) log_skipped_tools(opts.skipped_tools);
    greq.api = "openai.responses";
    // What the response object repeats, journaled with the request: any reader, in this
    // process or after a restart, builds the same object and events from the session alone.
    opts.echo["background"] = opts.background;
    opts.echo["store"]      = opts.store && rc.sessions->journaled();
    greq.client_meta        = opts.echo.dump();
    start_error serr;
    auto s = rc.sessions->start(greq, serr);
    if (!s) {
        if (serr.type == start_error::kind::OVERLOADED) res.set_header("Retry-After", "1");
        return send_error(res, api_dialect::OPENAI, openai_refusal(serr));
    }
    set_session_header(res, s->id());
    // A background response belongs to no connection: its client going away cancels nothing;
    // nor does it cancel a detached one (X-Superfluid-Detach).
    if (opts.stream)
        return serve_responses_stream(req, res, s, -1, !opts.background && !wants_detach(req));
    auto r = std::make_shared<responses_run>(s);
    if (opts.background) {
        r->feed(std::chrono::milliseconds(0));
        return send_object(res, r->object());
    }
    auto last_check = std::chrono::steady_clock::now();
    while (!r->done) {
        r->feed(std::chrono::milliseconds(100));
        if (client_gone(req, last_check)) {
            s->cancel();
            return;
        }
    }
    auto obj = r->object();
    if (obj["status"] == "failed" || obj["status"] == "cancelled") {
        return send_error(
            res, api_dialect::OPENAI,
            api_error{rc.sessions->shutting_down() ? 503 : 500, "server_error",
                      obj["error"].is_object() ? obj["error"]["message"].get<std::string>()
                                               : "the response was cancelled",
                      "", ""});
    }
    send_object(res, obj);
}

// The Responses session named by the path ("resp_<session id>"), or a 404 written into `res`.
// Unknown ids, other APIs' sessions, responses created with store:false and ones journal
// retention removed are all "not found", as OpenAI answers for ids it does not hold.
std::shared_ptr<session> find_response(const openai_route_context &rc, const httplib::Request &req,
                                       httplib::Response &res) {
    const std::string id = req.matches[1];
    std::shared_ptr<session> s;
    if (id.rfind("resp_", 0) == 0) s = rc.sessions->find(id.substr(5));
    if (s && !rc.access->may_use(rc.access->of(req), s->client())) s = nullptr;  // another's
    if (!s || s->api() != "openai.responses" ||
        !fields::flag_or(responses_echo(*s), "store", false)) {
        send_error(
            res, api_dialect::OPENAI,
            api_error{404, "invalid_request_error", "No response found with id '" + id + "'.",
                      "response_id", "response_not_found"});
        return nullptr;
    }
    set_session_header(res, s->id());
    return s;
}

// GET /v1/responses/{id}: the response object now, or with ?stream=true its events after
// ?starting_after=N (all when absent), replayed from the journal and then followed live.
void handle_retrieve(const httplib::Request &req, httplib::Response &res,
                     const openai_route_context &rc) {
    const std::string stream = req.has_param("stream") ? req.get_param_value("stream") : "false";
    if (stream != "true" && stream != "false") {
        return send_error(res, api_dialect::OPENAI,
                          bad_request("'stream' must be true or false", "stream", "invalid_value"));
    }
    int64_t after = -1;
    if (req.has_param("starting_after")) {
        if (!parse_starting_after(req.get_param_value("starting_after"), after)) {
            return send_error(res, api_dialect::OPENAI,
                              bad_request("'starting_after' must be a non-negative integer "
                                          "(a sequence_number)",
                                          "starting_after", "invalid_value"));
        }
    }
    auto s = find_response(rc, req, res);
    if (!s) return;
    if (stream == "true") {
        return serve_responses_stream(req, res, s, after, false);
    }
    responses_run r(s);
    r.feed(std::chrono::milliseconds(0));
    send_object(res, r.object());
}

// POST /v1/responses/{id}/cancel: cancels a background response that is still running and
// answers its object (status cancelled). Cancelling a cancelled one again answers it again
// (idempotent); one that ended otherwise, or that was not created in background, is a 400.
void handle_cancel(const httplib::Request &req, httplib::Response &res,
                   const openai_route_context &rc) {
    auto s = find_response(rc, req, res);
    if (!s) return;
    if (!fields::flag_or(responses_echo(*s), "background", false)) {
        return send_error(res, api_dialect::OPENAI,
                          bad_request("Only responses created with background set to true "
                                      "can be cancelled.",
                                      "response_id", "invalid_request"));
    }
    if (!s->finished()) {
        cancel_and_wait(*s);
    } else {
        responses_run r(s);
        r.feed(std::chrono::milliseconds(0));
        const std::string status = r.object()["status"];
        if (status != "cancelled") {
            return send_error(res, api_dialect::OPENAI,
                              bad_request("Cannot cancel a response with status '" + status +
                                              "'; only queued or in-progress responses can "
                                              "be cancelled.",
                                          "response_id", "invalid_request"));
        }
    }
    responses_run r(s);
    r.feed(std::chrono::milliseconds(0));
    send_object(res, r.object());
}

}  // namespace

void register_responses_routes(http_router &svr, openai_route_context ctx) {
    auto rc = std::make_shared<const openai_route_context>(std::move(ctx));
    svr.Post("/v1/responses", [rc](const httplib::Request &req, httplib::Response &res,
                                   const httplib::ContentReader &reader) {
        std::string body;
        if (!read_body(reader, rc->max_body_bytes, body)) {
            return send_error(res, api_dialect::OPENAI,
                              api_error{413, "invalid_request_error",
                                        "the request body is too large", "", "request_too_large"});
        }
        handle_create(req, body, res, *rc);
    });
    svr.Get(R"(/v1/responses/([A-Za-z0-9_\-]+))",
            [rc](const httplib::Request &req, httplib::Response &res) {
                handle_retrieve(req, res, *rc);
            });
    svr.Post(R"(/v1/responses/([A-Za-z0-9_\-]+)/cancel)",
             [rc](const httplib::Request &req, httplib::Response &res) {
                 handle_cancel(req, res, *rc);
             });
}

}  // namespace sf
