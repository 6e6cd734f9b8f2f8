#include "http/anthropic_routes.h"

#include <cpp-httplib/httplib.h>

#include "api/anthropic/anthropic_dialect.h"
#include "http/error_reply.h"
#include "http/generation_handler.h"

namespace sf {

namespace {

// The prompt's token count, as /v1/messages with the same body would render it.
void handle_count_tokens(const httplib::Request &req, const std::string &body,
                         httplib::Response &res, const route_context &rc) {
    anthropic_generation d(true, false);
    generate_request greq;
    if (!prepare_generation(req, body, res, rc, d, greq)) return;
    int32_t n = 0;
    start_error serr;
    if (!rc.sessions->count_prompt_tokens(greq, n, serr))
        return send_error(res, api_dialect::ANTHROPIC, d.refusal(serr));
    res.set_content(R"({"input_tokens":)" + std::to_string(n) + "}", "application/json");
}

}  // namespace

void register_anthropic_routes(http_router &svr, route_context ctx) {
    auto rc = std::make_shared<const route_context>(std::move(ctx));
    register_generation_route(svr, "/v1/messages", rc, [](const route_context &c) {
        return std::make_unique<anthropic_generation>(false, c.sessions->shutting_down());
    });
    register_body_route(svr, "/v1/messages/count_tokens", rc, api_dialect::ANTHROPIC,
                        [rc](const httplib::Request &req, const std::string &body,
                             httplib::Response &res) { handle_count_tokens(req, body, res, *rc); });
}

}  // namespace sf
