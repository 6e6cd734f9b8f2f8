// Durations in Go's time.ParseDuration syntax, as Ollama's `keep_alive` and OLLAMA_KEEP_ALIVE
// take them ("300ms", "5m", "1h30m", "-1s", "0"). Pure; any thread.
#pragma once

#include <string>

namespace sf {

/**
 * Parses `text` (an optional sign, then number+unit pairs: h, m, s, ms, us/µs, ns; or "0")
 * into `seconds`. False when `text` is not such a duration (a bare number other than 0, an
 * unknown unit, empty).
 */
bool parse_go_duration(const std::string &text, double &seconds);

}  // namespace sf
