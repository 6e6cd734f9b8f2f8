// Parses Ollama native request bodies (POST /api/chat, POST /api/generate; reference:
// github.com/ollama/ollama docs/api.md) into a generate_request. Ollama's defaults apply
// (stream true, temperature 0.8, top_k 40, top_p 0.9, repeat_penalty 1.1, no token limit);
// unknown `options` are ignored as Ollama ignores them; a known option of the wrong type is a 400.
#pragma once

#include <cstdint>
#include <string>

#include "api/common/api_error.h"
#include "core/generate_request.h"

namespace sf {

/** How to answer, and the request parts the adapter handles itself. */
struct ollama_options {
    bool stream = true;
    bool raw    = false;  // generate: the prompt is sent as is, no template
    /**
     * A load/unload request: no messages (chat) or an empty prompt (generate). Nothing is
     * generated; the answer is a done line with done_reason "load", or "unload" when
     * keep_alive is 0.
     */
    bool load_only  = false;
    bool unload     = false;  // keep_alive == 0
    int32_t num_ctx = 0;      // options.num_ctx; 0 = the server's context
};

/** Parses a /api/chat body. Returns false with `err` (400) on bad input. */
bool parse_ollama_chat(const std::string &body, generate_request &out, ollama_options &opts,
                       api_error &err);

/** Parses a /api/generate body. Returns false with `err` (400) on bad input. */
bool parse_ollama_generate(const std::string &body, generate_request &out, ollama_options &opts,
                           api_error &err);

}  // namespace sf
