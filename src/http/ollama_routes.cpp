#include "http/ollama_routes.h"

#include "api/ollama/ollama_dialect.h"
#include "http/generation_handler.h"

namespace sf {

void register_ollama_routes(http_router &svr, route_context ctx) {
    auto rc = std::make_shared<const route_context>(std::move(ctx));
    for (bool chat : {true, false}) {
        register_generation_route(
            svr, chat ? "/api/chat" : "/api/generate", rc,
            [chat](const route_context &) { return std::make_unique<ollama_generation>(chat); });
    }
}

}  // namespace sf
