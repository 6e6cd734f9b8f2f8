// Which GGUF file(s) of a repository a tag designates (issue #8).
//
// A GGUF file's quantization is the last name component that looks like one ("Qwen3-0.6B-
// UD-Q4_K_XL.gguf" → "UD-Q4_K_XL"); a tag matches it case-insensitively. Sharded files
// ("…-00001-of-00003.gguf") form one group that is always fetched whole. Projector files
// (mmproj-*) are never candidates. Without a tag the first quantization present in
// kDefaultQuantOrder wins; a repository with none of those yields its first group by name.
#pragma once

#include <string>
#include <vector>

#include "models/repo_file.h"

namespace sf::models {

/** Default order for a missing tag: good quality per byte first, then larger, then smaller. */
extern const std::vector<std::string> kDefaultQuantOrder;

/** One runnable model in a repository: a single GGUF file or all the shards of one. */
struct gguf_group {
    std::string quant;             // as written in the file name, e.g. "UD-Q4_K_XL"; may be ""
    std::vector<repo_file> files;  // shard order; one element for an unsharded file
    uint64_t total_size() const;
};

/** "model-Q4_K_M-00002-of-00003.gguf" → "Q4_K_M" ("" when the name carries no quant). */
std::string quant_of(const std::string &path);

/** The repository's GGUF groups (projectors excluded), sorted by first file path. */
std::vector<gguf_group> gguf_groups(const std::vector<repo_file> &files);

/**
 * The group `tag` designates ("" = default order). Returns false with a message in `error` that
 * lists the available quantizations when nothing matches or the repository has no GGUF file.
 */
bool select_quant(const std::vector<repo_file> &files, const std::string &tag,
                  const std::string &repo, gguf_group &out, std::string &error);

/** "Q4_K_M, Q8_0, UD-Q4_K_XL" (the groups' quants, sorted, distinct). */
std::string available_quants(const std::vector<gguf_group> &groups);

}  // namespace sf::models
