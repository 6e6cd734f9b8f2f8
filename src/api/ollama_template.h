// The subset of Ollama's Go prompt templates that a `template` field in /api/generate may
// use: {{ .System }}, {{ .Prompt }}, {{ .Response }} (rendering stops there: the model writes
// the response), {{ if .X }} … {{ else }} … {{ end }}, and the {{- / -}} whitespace trims.
// Anything else is refused with a message naming it, never rendered wrong.
#pragma once

#include <string>

namespace sf {

/** Renders `tmpl`; false with `error` when it uses something outside the subset. */
bool render_ollama_template(const std::string &tmpl, const std::string &system,
                            const std::string &prompt, std::string &out, std::string &error);

}  // namespace sf
