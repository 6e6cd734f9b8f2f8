// Whole small files (certificates, keys, token stores): read at once, written atomically
// (a temporary file in the same folder, fsync, rename over the target) with a given mode.
// Plain functions, callable from any thread.
#pragma once

#include <string>

namespace sf {

/** Reads the whole file; false when it cannot be opened. */
bool read_file(const std::string &path, std::string &out);
/** Writes `text` to `path` atomically, created with `mode` (e.g. 0600 for keys). */
bool write_file_atomic(const std::string &path, const std::string &text, unsigned mode);

}  // namespace sf
