// The Responses API's `input` as chat messages (issue #19; platform.openai.com/docs/
// api-reference/responses/create#responses-create-input). Every item type a client such as
// Codex replays is accepted, since it re-sends the whole history on every turn and one
// refused item stops the session for good:
//   - message (roles user / assistant / system / developer; system and developer join the
//     instructions), content a string or input_text / output_text / refusal parts;
//   - function_call (a `namespace` joins the name as responses_tools.h names it),
//     custom_tool_call (its `input` becomes the arguments {"input": …}), local_shell_call
//     (its `action` becomes the arguments of a call to "local_shell");
//   - function_call_output / custom_tool_call_output / local_shell_call_output: `output` a
//     string or parts; text parts joined with newlines, image and file parts replaced by a
//     short placeholder (the model sees no images) rather than refused;
//   - reasoning: `content` (else `summary`) text kept as the next assistant turn's reasoning;
//     `encrypted_content` (null, empty or foreign) ignored;
//   - items of tools that ran elsewhere and leave nothing for the model to read back
//     (web_search_call, image_generation_call, file_search_call, code_interpreter_call,
//     tool_search_call / _output, mcp_list_tools, compaction, ghost_snapshot) dropped.
// A call's arguments that are not a JSON object (e.g. a call cut by max_output_tokens that the
// client sends back) are kept as {"arguments": "<text>"} so the prompt still renders.
// An item_reference (this server keeps no items) and any other type are a 400 naming the item.
// An empty `input` is a turn with one empty user message (the probe clients send).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/common/api_error.h"
#include "core/chat.h"

namespace sf {

/**
 * Appends the messages `request["input"]` describes to `msgs`; system and developer text goes
 * to `system` (joined by blank lines). False with a 400 naming the item at fault.
 */
bool parse_responses_input(const nlohmann::json &request, std::vector<chat_message> &msgs,
                           std::string &system, api_error &err);

}  // namespace sf
