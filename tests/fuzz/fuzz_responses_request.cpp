// libFuzzer target: the OpenAI Responses request parser (POST /v1/responses) on any body; the
// accepted request's echo (the fields the response object repeats) must serialize.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/responses/responses_request.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string body(reinterpret_cast<const char *>(data), size);
    sf::generate_request out;
    sf::responses_options opts;
    sf::api_error err;
    if (!sf::parse_responses_request(body, out, opts, err)) {
        sf::fuzz::check_rejection(err);
        return 0;
    }
    // The echo goes out in every response object: dump() must not throw (invalid UTF-8 is
    // rejected by the JSON parser before it gets here).
    (void)opts.echo.dump();
    return 0;
}
