// The subset of Ollama's Go prompt templates that a `template` field in /api/generate may
// use: {{ .System }}, {{ .Prompt }}, {{ .Response }} (rendering stops there: the model writes
// the response), {{ if .X }} … {{ else }} … {{ end }}, and the {{- / -}} whitespace trims.
// Anything else is refused with a message naming it, never rendered wrong.
#pragma once

#include <cstddef>
#include <string>

namespace sf {

/**
 * The most a rendered template may hold: the default request body limit, so a template gives a
 * client no larger prompt than it could send itself. Each {{ .Prompt }} or {{ .System }} inserts
 * a copy of the value, so without a bound a 111 KB body rendered to 4.56 GB (issue #38 item 6).
 */
constexpr size_t k_template_output_max = size_t{32} << 20;

/**
 * Renders `tmpl`; false with `error` when it uses something outside the subset or its output
 * would exceed `max_out` bytes (checked before each piece is appended: nothing larger is built).
 */
bool render_ollama_template(const std::string &tmpl, const std::string &system,
                            const std::string &prompt, std::string &out, std::string &error,
                            size_t max_out = k_template_output_max);

}  // namespace sf
