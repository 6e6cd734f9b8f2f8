// Standard per-user directories (XDG Base Directory Specification).
#pragma once

#include <string>

namespace sf::paths {

/** $XDG_STATE_HOME/superfluid or ~/.local/state/superfluid (journal, default model). */
std::string default_state_dir();
/** $XDG_CACHE_HOME/superfluid or ~/.cache/superfluid (prefix-cache disk tier). */
std::string default_cache_dir();
/** Creates `dir` and its parents; returns false (errno set) when that fails. */
bool make_dirs(const std::string &dir);

}  // namespace sf::paths
