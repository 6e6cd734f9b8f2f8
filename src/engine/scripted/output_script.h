// A test script of what the model answers, turn by turn (the scripted test engine,
// engine/scripted/scripted_engine.h). Tests drive real agents through a whole tool loop on a
// random-weight model with it: the first turn calls the agent's own shell tool in the
// model's native chat format, the turn after the tool result answers in text.
//
// The file is JSON:
//
//   {"replies": [
//      {"when": {"tool": "exec_command", "tool_results": 0},
//       "text": "<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\": \"touch
//       x\"}}\n</tool_call>"},
//      {"when": {"tool_results": 1}, "text": "Done."}],
//    "end": "<|im_end|>"}
//
// A request takes the first reply whose every condition holds (none: the model samples as
// usual). Conditions: `tool` (a tool of that name is offered), `tool_results` (the
// conversation holds exactly that many tool results), `user_contains` (a user message
// contains the text: agents add context messages after the prompt). `text` is what the model emits, tokenized with special tokens (so
// "<tool_call>" is Qwen3's single token), then `end` (default "<|im_end|>", one end-of-turn
// token). Plain data and pure functions; thread-safe to read once loaded.
#pragma once

#include <string>
#include <vector>

#include "core/chat.h"

namespace sf {

/** One scripted answer and when it applies. */
struct scripted_reply {
    std::string tool;           // offered tool name that must be present; "" = any
    int tool_results = -1;      // exact count of tool-result messages; -1 = any
    std::string user_contains;  // substring of some user message; "" = any
    std::string text;           // the answer, in the model's native chat format
};

/** A whole script: replies in priority order and the end-of-turn token's text. */
struct output_script {
    std::vector<scripted_reply> replies;
    std::string end = "<|im_end|>";
};

/**
 * Reads and validates a script file. Returns false with `error` naming the file and the
 * problem (unreadable, not JSON, a reply without text, an unknown condition).
 */
bool load_output_script(const std::string &path, output_script &out, std::string &error);

/** Parses a script from JSON text (load_output_script without the file). */
bool parse_output_script(const std::string &json_text, output_script &out, std::string &error);

/**
 * The reply for a conversation (`messages` as rendered, `options.tools` offered): the first
 * whose conditions all hold, or null when none does.
 */
const scripted_reply *pick_reply(const output_script &script,
                                 const std::vector<chat_message> &messages,
                                 const chat_options &options);

}  // namespace sf
