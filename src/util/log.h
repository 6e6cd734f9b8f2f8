// Minimal leveled logger: one line per call to stderr, "<time> <level> <component>: msg".
// Thread-safe (one write per line). Level from SUPERFLUID_LOG (debug|info|warn|error),
// default info. printf-style formatting (gcc 12 has no <format>).
#pragma once

#include <string>

namespace sf::log {

enum class level { DEBUG = 0, INFO = 1, WARN = 2, ERROR = 3 };

/** True when `lvl` would be written. */
bool enabled(level lvl);
/** Formats and writes one line if `lvl` is enabled. */
void write(level lvl, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/**
 * True the first time `key` is seen in this process (at most 256 keys are kept, then false):
 * for log lines said once, not on every request.
 */
bool first_sighting(const std::string &key);

}  // namespace sf::log

#define SF_LOG_DEBUG(comp, ...) ::sf::log::write(::sf::log::level::DEBUG, comp, __VA_ARGS__)
#define SF_LOG_INFO(comp, ...) ::sf::log::write(::sf::log::level::INFO, comp, __VA_ARGS__)
#define SF_LOG_WARN(comp, ...) ::sf::log::write(::sf::log::level::WARN, comp, __VA_ARGS__)
#define SF_LOG_ERROR(comp, ...) ::sf::log::write(::sf::log::level::ERROR, comp, __VA_ARGS__)
