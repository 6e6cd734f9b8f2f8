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
/**
 * make_dirs, then `dir` itself (an existing one too; not its parents) 0700: readable by this
 * user only. False when it cannot be created; a mode that cannot be set (another user's
 * folder) is left as it is.
 */
bool make_private_dirs(const std::string &dir);
/** Sets `path` (a file or folder this user owns) to `mode` when it exists; no error if not. */
void restrict_mode(const std::string &path, unsigned mode);
/**
 * Makes every file and folder this process creates from now on private to its user (umask
 * 077: folders 0700, files 0600) whatever umask it was started with; children inherit it.
 * serve and join call it first: their state holds prompts, answers, keys and certificates
 * (issue #38: journal.db was 0644 under the usual umask 022).
 */
void make_files_private();

}  // namespace sf::paths
