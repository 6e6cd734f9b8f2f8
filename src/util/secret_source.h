// Secrets (API keys, join tokens) from a file or an environment variable, so they need not be
// command-line arguments, which every local user can read in ps(1) and /proc/PID/cmdline.
// Plain functions, callable from any thread.
#pragma once

#include <string>
#include <vector>

namespace sf {

/**
 * The secrets in file `path`: one a line, surrounding whitespace (and a CR) trimmed, blank lines
 * and lines starting with '#' skipped. False with `error` when the file cannot be read or holds
 * none. `warning` is set (the call still succeeds) when other users may read the file.
 */
bool read_secrets_file(const std::string &path, std::vector<std::string> &out, std::string &error,
                       std::string &warning);

/** The secrets in environment variable `name`, separated by commas or newlines; none when unset. */
std::vector<std::string> secrets_from_env(const char *name);

}  // namespace sf
