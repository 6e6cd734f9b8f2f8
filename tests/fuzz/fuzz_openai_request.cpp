// libFuzzer target: the OpenAI request parsers (POST /v1/chat/completions, /v1/completions,
// /v1/embeddings) on any body. A body is accepted or rejected with a 4xx (fuzz_check.h); a
// crash, a sanitizer report, a leak or an exception out of a parser is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/embeddings/embed_request.h"
#include "api/openai/openai_request.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string body(reinterpret_cast<const char *>(data), size);
    {
        sf::generate_request out;
        sf::openai_options opts;
        sf::api_error err;
        if (!sf::parse_openai_chat(body, out, opts, err)) sf::fuzz::check_rejection(err);
    }
    {
        sf::generate_request out;
        sf::openai_options opts;
        sf::api_error err;
        if (!sf::parse_openai_completion(body, out, opts, err)) sf::fuzz::check_rejection(err);
    }
    {
        sf::embed_job out;
        sf::api_error err;
        if (!sf::parse_openai_embeddings(body, out, err)) sf::fuzz::check_rejection(err);
    }
    return 0;
}
