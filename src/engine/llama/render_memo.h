// A memo of chat template renderings (worker request threads), so that a request differing
// from a recent one only in the text of its user messages and tool results skips llama.cpp's
// template application.
//
// Why: common_chat_templates_apply analyses the template's structure on every call (its
// differential autoparser renders the template with probe inputs) and renders the prompt
// three times: 3.8 ms per request on the 2-core test VM whatever the prompt's length, a fifth
// of a prefix-cache hit's time to first token (issue #18), spent again on every question
// asked against the same system prompt, tools and history, and on every edited message.
//
// How: the key is everything the template sees (templates, tools, options, the date, every
// message), with the content of each user message and tool result whose content is inert
// replaced by a mark of its position. Inert (inert_content below): non-empty, no leading or
// trailing whitespace, none of < > [ ] { } | \ / (the characters templates test content for:
// tags, "/think" switches, tool-response wrappers; trim is then the identity). The value is
// the rendering with the marks. The first request of a key renders both ways; only when
// putting the contents in the marks' places gives exactly the full rendering (prompt,
// grammar, parser, stops, generation prompt) do later requests of that key take the memo.
// A request with no such message is rendered in full. Thread-safe.
#pragma once

#include <chat.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace sf {

/** The template application the memo stands in for (serialised by the caller). */
using template_apply = std::function<common_chat_params(const common_chat_templates *,
                                                        const common_chat_templates_inputs &)>;

/** common_chat_templates_apply(templates, in), from the memo where it holds. */
common_chat_params memo_render(const common_chat_templates *templates,
                               const common_chat_templates_inputs &in, const template_apply &apply);

/**
 * True when a template cannot tell `s` from any other inert content by what it tests: non-empty,
 * no leading or trailing whitespace, none of < > [ ] { } | \ / nor the 0x1e that the memos'
 * placeholders use (see the file comment).
 */
bool inert_content(std::string_view s);

/**
 * Whether a message's content is marked in a memo key (this memo's, and the message boundary
 * finder's): a user message or tool result whose content is inert.
 */
bool marked_content(std::string_view role, std::string_view content);

/** The stand-in for the content of message `i` in a memoized rendering (0x1e-delimited). */
std::string content_mark(size_t i);

/** Appends `v` to a memo key as "<size>:<bytes>" (unambiguous whatever `v` holds). */
void add_key_field(std::string &key, std::string_view v);

/** Renderings taken from the memo since start (tests). */
uint64_t memo_render_hits();

}  // namespace sf
