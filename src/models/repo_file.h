// One file of a hub repository at a commit, as the hub's tree listing describes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sf::models {

struct repo_file {
    std::string path;     // path inside the repository, e.g. "Q4_K_M/model-00001-of-00002.gguf"
    uint64_t size = 0;    // bytes (the LFS object's size for LFS files)
    std::string sha256;   // LFS oid (lowercase hex); "" for files not stored in LFS
    std::string git_oid;  // git blob id (sha1 hex); names non-LFS blobs in the HF cache

    /** The HF cache's blob name for this file: its SHA-256 for LFS files, else the git oid. */
    const std::string &etag() const { return sha256.empty() ? git_oid : sha256; }
};

/** A repository resolved at one commit. */
struct repo_snapshot {
    std::string commit;  // 40-hex commit id
    std::vector<repo_file> files;
};

}  // namespace sf::models
