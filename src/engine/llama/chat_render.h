// The core chat layer's worker half: messages + chat_options → prompt text, output constraint
// (grammar, lazy triggers, preserved tokens, stops) and parse spec, through llama.cpp `common`
// (common_chat_templates_apply), as llama-server does it (tools/server/server-common.cpp,
// oaicompat_chat_params_parse). Used by llama_engine::render_chat.
#pragma once

#include <string>
#include <vector>

#include "engine/engine.h"

struct common_chat_templates;
struct common_chat_msg;

namespace sf {

/** A rendered chat before tokenization. */
struct chat_render_result {
    std::string prompt;
    std::vector<std::string> extra_stops;
    output_constraint constraint;
    chat_parse_spec parse;
};

/**
 * Applies the model's template. A NAMED tool choice renders the prompt with every tool (the
 * model sees the whole tool list) and takes grammar and parser from a second application
 * with only the named tool, required. Throws std::exception with a readable message on
 * bad input (unknown named tool, a schema the grammar converter rejects, template errors).
 */
chat_render_result render_chat_template(const common_chat_templates *templates,
                                        const std::vector<chat_message> &messages,
                                        bool add_generation_prompt, const chat_options &options,
                                        bool memo = true);

/**
 * One message in llama.cpp common's form (role, content, reasoning, tool calls and results).
 * Tool call arguments that are not a JSON object (a call cut by max_tokens, sent back) are kept
 * as {"arguments": "<text>"}: common's chat layer refuses anything else.
 */
common_chat_msg to_common(const chat_message &m);

}  // namespace sf
