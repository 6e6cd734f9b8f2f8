// Volatile lines: text some clients put into the system prompt that changes with every
// request and carries nothing for the model, so that no two prompts share their first tokens
// and every prefix cache misses. Claude Code prepends `x-anthropic-billing-header: cc_version=…;
// cch=…;` (a per-request hash) to its system prompt. Such lines are removed from system
// messages before the chat template renders them, for every API.
#pragma once

#include <string>
#include <vector>

#include "core/chat.h"

namespace sf {

/**
 * Removes volatile lines (lines starting, after leading blanks, with a prefix of
 * volatile_line_prefixes(), case-insensitively) from the content of system messages, and the
 * blank lines that then lead the content. Returns the number of lines removed.
 */
int normalize_volatile_lines(std::vector<chat_message> &messages);

/** The line prefixes treated as volatile: "x-anthropic-billing-header:". */
const std::vector<std::string> &volatile_line_prefixes();

}  // namespace sf
