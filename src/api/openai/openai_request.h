// Parses OpenAI request bodies (POST /v1/chat/completions, POST /v1/completions) into a
// generate_request. Field rules follow the API reference (platform.openai.com/docs/api-reference);
// anything we cannot honour is a 400 naming the field, never silently ignored.
#pragma once

#include <string>

#include "api/common/api_error.h"
#include "core/generate_request.h"

namespace sf {

/** Wire options that stay at the edge (how to answer), not part of the generation. */
struct openai_options {
    bool stream        = false;
    bool include_usage = false;  // stream_options.include_usage
};

/** Parses a chat completion body. Returns false with `err` (400) on bad input. */
bool parse_openai_chat(const std::string &body, generate_request &out, openai_options &opts,
                       api_error &err);

/** Parses a legacy text completion body. Returns false with `err` (400) on bad input. */
bool parse_openai_completion(const std::string &body, generate_request &out, openai_options &opts,
                             api_error &err);

}  // namespace sf
