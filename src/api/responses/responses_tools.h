// The Responses API's `tools` and `tool_choice` as the core chat layer sees them (issue #19;
// platform.openai.com/docs/api-reference/responses/create#responses-create-tools). What the
// model can call becomes a chat tool_spec:
//   - `function` tools as they are;
//   - `custom` (freeform) tools as a function taking one string, {"input": "…"}; their calls
//     are answered as `custom_tool_call` items with that string as `input`;
//   - `namespace` tools (groups of function/custom tools, e.g. an MCP server's) flattened, each
//     called "<namespace>__<name>" by the model and answered with `namespace` and `name` apart.
// Tools the server cannot run (web_search, web_search_preview, file_search, local_shell, mcp,
// computer_use_preview, image_generation, code_interpreter, tool_search, any unknown type) are
// skipped, never a 400 for the whole turn: clients such as Codex send them by default. Only a
// malformed callable tool (no name, bad parameters) is a 400 naming `tools[i]`.
// The map from the model's names back to the client's is rebuilt from the echoed `tools`, so
// every reader of a journaled response (responses_builder) answers with the same items.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/common/api_error.h"
#include "core/chat.h"

namespace sf {

/** One callable tool: the name the model calls and what the client calls it. */
struct responses_tool {
    std::string chat_name;  // the tool_spec name the model sees
    std::string name;       // the client's name
    std::string ns;         // its namespace ("" when none)
    bool custom = false;    // freeform: one string input, answered as custom_tool_call
};

/** The callable tools of a request, by the name the model calls. */
class responses_tool_map {
  public:
    /** The map of a request's `tools` (JSON array; anything else gives an empty map). */
    static responses_tool_map of(const nlohmann::json &tools);

    /** The tool the model calls `chat_name`, or nullptr (a name no tool has). */
    const responses_tool *find(const std::string &chat_name) const;
    /** The name the model calls a tool the client names `name` in namespace `ns` ("": none). */
    static std::string chat_name(const std::string &ns, const std::string &name);
    /** True when `chat_name` is a custom (freeform) tool. */
    bool is_custom(const std::string &chat_name) const;

    const std::vector<responses_tool> &tools() const { return tools_; }

  private:
    std::vector<responses_tool> tools_;
};

/**
 * Fills `chat.tools` from the request's `tools`; the types skipped (for one log line) go to
 * `skipped`, e.g. "web_search", "image_generation". False with a 400 naming `tools[i]` for a
 * malformed callable tool.
 */
bool parse_responses_tools(const nlohmann::json &request, chat_options &chat,
                           std::vector<std::string> &skipped, api_error &err);

/**
 * `tool_choice`: "auto" | "none" | "required", {"type":"function"|"custom","name"} (a
 * function may name its "namespace"), {"type":"allowed_tools","mode","tools":[…]} (the
 * offered tools narrowed to those). A choice that forces a skipped (hosted) tool, or names a
 * tool not offered, is a 400 naming `tool_choice`.
 */
bool parse_responses_tool_choice(const nlohmann::json &request, chat_options &chat, api_error &err);

}  // namespace sf
