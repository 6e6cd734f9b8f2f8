// libFuzzer target: the Anthropic Messages parser (POST /v1/messages and
// /v1/messages/count_tokens) on any body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/anthropic/anthropic_request.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string body(reinterpret_cast<const char *>(data), size);
    for (bool count_only : {false, true}) {
        sf::generate_request out;
        sf::anthropic_options opts;
        sf::api_error err;
        if (!sf::parse_anthropic_messages(body, count_only, out, opts, err))
            sf::fuzz::check_rejection(err);
    }
    return 0;
}
