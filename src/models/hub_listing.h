// The hub's file listing, read from bytes a remote server sent (pure, no I/O): one page of
//   GET {endpoint}/api/models/{repo}/tree/{commit}?recursive=true
//   → [{"type": "file", "path", "size", "oid", "lfs": {"oid": sha256, "size"}}, …]
// and the Link header that names the next page. What it keeps is safe to use as file names in
// the HF cache: a path inside the snapshot (relative, no "." or ".." part) and a blob name that
// is a digest in hex (64 digits for an LFS SHA-256, 40 for a git blob id), never "../x".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/repo_file.h"

namespace sf::models {

/**
 * Appends the files of one listing page (a JSON array) to `files`. Entries that are not
 * objects of type "file", or whose path or digests are unsafe or malformed (wrong JSON type,
 * not hex, wrong length), are skipped. Returns false when `body` is not a JSON array. Never
 * throws.
 */
bool parse_tree_page(std::string_view body, std::vector<repo_file> &files);

/**
 * The target of the `rel="next"` link in a Link header value (RFC 8288:
 * `<https://…?cursor=…>; rel="next"`), or "" when there is none. The caller still checks
 * where it points before following it.
 */
std::string next_page_link(const std::string &link_header);

/** A repository path that stays inside the snapshot directory: relative, no "."/".." part. */
bool safe_repo_path(const std::string &p);

/** True when `s` is exactly `n` lowercase hex digits. */
bool is_hex_digest(const std::string &s, size_t n);

}  // namespace sf::models
