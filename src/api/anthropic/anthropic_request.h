// Parses Anthropic Messages API bodies (POST /v1/messages and /v1/messages/count_tokens,
// docs.anthropic.com "Messages") into a generate_request for the core chat layer: system as a
// string or text blocks; text, tool_use, tool_result, thinking and redacted_thinking blocks;
// tools, tool_choice (auto/any/tool/none), thinking, stop_sequences, metadata.
#pragma once

#include <string>

#include "api/common/api_error.h"
#include "core/generate_request.h"

namespace sf {

/** Wire options that stay at the edge. */
struct anthropic_options {
    bool stream = false;
    std::vector<std::string> stop_sequences;  // to report which one matched
};

/**
 * Parses a Messages body. `count_only` (count_tokens): max_tokens is not required. Returns
 * false with `err` (a 400 naming the field) on bad input.
 */
bool parse_anthropic_messages(const std::string &body, bool count_only, generate_request &out,
                              anthropic_options &opts, api_error &err);

}  // namespace sf
