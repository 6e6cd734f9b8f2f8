// libFuzzer target: the Ollama native parsers (POST /api/chat, /api/generate, /api/embed,
// /api/embeddings) on any body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/embeddings/embed_request.h"
#include "api/ollama/ollama_request.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string body(reinterpret_cast<const char *>(data), size);
    using chat_parser = bool (*)(const std::string &, sf::generate_request &, sf::ollama_options &,
                                 sf::api_error &);
    for (chat_parser parse : {&sf::parse_ollama_chat, &sf::parse_ollama_generate}) {
        sf::generate_request out;
        sf::ollama_options opts;
        sf::api_error err;
        if (!parse(body, out, opts, err)) sf::fuzz::check_rejection(err);
    }
    using embed_parser = bool (*)(const std::string &, sf::embed_job &, sf::api_error &);
    for (embed_parser parse : {&sf::parse_ollama_embed, &sf::parse_ollama_embeddings}) {
        sf::embed_job out;
        sf::api_error err;
        if (!parse(body, out, err)) sf::fuzz::check_rejection(err);
    }
    return 0;
}
