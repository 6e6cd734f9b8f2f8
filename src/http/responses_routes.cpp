#include "http/responses_routes.h"

#include <cpp-httplib/httplib.h>

#include "api/responses/responses_dialect.h"
#include "api/responses/responses_run.h"
#include "http/error_reply.h"
#include "http/generation_handler.h"
#include "http/route_util.h"
#include "http/router.h"
#include "http/session_ids.h"
#include "http/stream_driver.h"

namespace sf {

namespace {

void send_object(httplib::Response &res, const session &s) {
    res.set_content(responses_object_body(s), "application/json");
}

// Streams Responses session `s`'s events after sequence number `skip_through` (-1: all), from
// the journal and then live; a reader of a stored response never cancels it.
void serve_responses_stream(const httplib::Request &req, httplib::Response &res,
                            std::shared_ptr<session> s, int64_t skip_through) {
    auto enc = responses_encoder(*s, skip_through);
    serve_session_stream(req, res, std::move(s), std::move(enc), 0, false);
}

// The Responses session named by the path ("resp_<session id>"), or a 404 written into `res`.
// Unknown ids, other APIs' sessions, responses created with store:false and ones journal
// retention removed are all "not found", as OpenAI answers for ids it does not hold.
std::shared_ptr<session> find_response(const route_context &rc, const httplib::Request &req,
                                       httplib::Response &res) {
    const std::string id = req.matches[1];
    std::shared_ptr<session> s;
    if (id.rfind("resp_", 0) == 0) s = rc.sessions->find(id.substr(5));
    if (s && !rc.access->may_use(rc.access->of(req), s->client())) s = nullptr;  // another's
    if (!s || s->api() != "openai.responses" || !responses_flag(*s, "store")) {
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
void handle_retrieve(const httplib::Request &req, httplib::Response &res, const route_context &rc) {
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
        return serve_responses_stream(req, res, s, after);
    }
    send_object(res, *s);
}

// POST /v1/responses/{id}/cancel: cancels a background response that is still running and
// answers its object (status cancelled). Cancelling a cancelled one again answers it again
// (idempotent); one that ended otherwise, or that was not created in background, is a 400.
void handle_cancel(const httplib::Request &req, httplib::Response &res, const route_context &rc) {
    auto s = find_response(rc, req, res);
    if (!s) return;
    if (!responses_flag(*s, "background")) {
        return send_error(res, api_dialect::OPENAI,
                          bad_request("Only responses created with background set to true "
                                      "can be cancelled.",
                                      "response_id", "invalid_request"));
    }
    if (!s->finished()) {
        cancel_and_wait(*s);
    } else {
        std::string status;
        (void)responses_object_body(*s, &status);
        if (status != "cancelled") {
            return send_error(res, api_dialect::OPENAI,
                              bad_request("Cannot cancel a response with status '" + status +
                                              "'; only queued or in-progress responses can "
                                              "be cancelled.",
                                          "response_id", "invalid_request"));
        }
    }
    send_object(res, *s);
}

}  // namespace

void register_responses_routes(http_router &svr, route_context ctx) {
    auto rc = std::make_shared<const route_context>(std::move(ctx));
    register_generation_route(svr, "/v1/responses", rc, [](const route_context &c) {
        return std::make_unique<responses_generation>(c.sessions->journaled());
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
