// Parses OpenAI Responses API bodies (POST /v1/responses; platform.openai.com/docs/api-reference/
// responses/create) into a generate_request for the core chat layer: `input` (a string or an
// item list, api/responses/responses_input.h), `instructions`, `tools` and `tool_choice`
// (api/responses/responses_tools.h: function and custom tools, namespaces; hosted tools skipped),
// `max_output_tokens`, `temperature`/`top_p`, `parallel_tool_calls`, `text.format`
// (json_schema / json_object), `reasoning.effort`, `background`, `store`; `include`,
// `truncation`, `prompt_cache_key`, `service_tier`, `metadata`, `user` are type-checked and
// echoed. What the server cannot honour (previous_response_id, conversation) is a 400 naming
// the field.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/common/api_error.h"
#include "core/generate_request.h"

namespace sf {

/** What the answer echoes back and how to send it. */
struct responses_options {
    bool stream     = false;
    bool background = false;  // answer at once; the generation runs on without a client
    bool store      = true;   // retrievable by id (GET /v1/responses/{id}); OpenAI's default
    nlohmann::json echo;  // request fields the response object repeats (instructions, tools, …)
    std::vector<std::string> skipped_tools;  // tool types not offered to the model (one log line)
};

/** Parses a /v1/responses body. Returns false with `err` (400) on bad input. */
bool parse_responses_request(const std::string &body, generate_request &out,
                             responses_options &opts, api_error &err);

}  // namespace sf
