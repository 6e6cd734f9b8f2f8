#include "http/openai_routes.h"

#include "api/openai/openai_dialect.h"
#include "http/generation_handler.h"

namespace sf {

void register_openai_routes(http_router &svr, route_context ctx) {
    auto rc = std::make_shared<const route_context>(std::move(ctx));
    for (bool chat : {true, false}) {
        register_generation_route(
            svr, chat ? "/v1/chat/completions" : "/v1/completions", rc,
            [chat](const route_context &) { return std::make_unique<openai_generation>(chat); });
    }
}

}  // namespace sf
