// A memo of chat template renderings (worker request threads), so that a request differing
// from a recent one only in its last user message skips llama.cpp's template application.
//
// Why: common_chat_templates_apply analyses the template's structure on every call (its
// differential autoparser renders the template with probe inputs) and renders the prompt
// three times: 3.8 ms per request on the 2-core test VM whatever the prompt's length, a fifth
// of a prefix-cache hit's time to first token (issue #18), spent again on every question
// asked against the same system prompt, tools and history.
//
// How: the key is everything the template sees (templates, tools, options, the date, every
// message) except the last message's content, when that message is a user message whose
// content is inert: non-empty, no leading or trailing whitespace, none of < > [ ] { } | \ /
// (the characters templates test content for: tags, "/think" switches, tool-response
// wrappers; trim is then the identity). The value is the rendering with a placeholder in
// place of that content. The first request of a key renders both ways; only when putting the
// content in the placeholder's place gives exactly the full rendering (prompt, grammar,
// parser, stops, generation prompt) do later requests of that key take the memo. Anything
// else is rendered in full. Thread-safe.
#pragma once

#include <chat.h>

#include <functional>

namespace sf {

/** The template application the memo stands in for (serialised by the caller). */
using template_apply = std::function<common_chat_params(const common_chat_templates *,
                                                        const common_chat_templates_inputs &)>;

/** common_chat_templates_apply(templates, in), from the memo where it holds. */
common_chat_params memo_render(const common_chat_templates *templates,
                               const common_chat_templates_inputs &in, const template_apply &apply);

/** Renderings taken from the memo since start (tests). */
uint64_t memo_render_hits();

}  // namespace sf
