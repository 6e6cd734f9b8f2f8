// Parses the OpenAI chat fields that shape a turn beyond its messages — tools, tool_choice,
// parallel_tool_calls, response_format, reasoning_effort, chat_template_kwargs — into the
// core chat layer's chat_options (engine/engine.h). Also used by other OpenAI-shaped APIs.
#pragma once

#include <nlohmann/json.hpp>

#include "api/common/api_error.h"
#include "core/chat.h"
#include "core/sampling.h"
#include "core/token.h"

namespace sf {

/**
 * Reads the fields from body `j` into `out`. False with `err` (400 naming the field) on bad
 * input: malformed tools, a tool_choice naming no offered tool, a forced choice without
 * tools, a schema keyword the grammar cannot enforce, an unknown reasoning_effort.
 */
bool parse_openai_chat_options(const nlohmann::json &j, chat_options &out, api_error &err);

/** Validates one tool's parameters schema (lenient, see json_schema_check.h) into JSON text. */
bool tool_parameters_text(const nlohmann::json &params, const std::string &param_name,
                          std::string &out, api_error &err);

/**
 * reasoning_effort (OpenAI: none, minimal, low, medium, high, xhigh) onto chat_options:
 * none/minimal turn reasoning off, the others on with the template kwarg. False for others.
 */
bool apply_reasoning_effort(const std::string &effort, chat_options &out);

}  // namespace sf
