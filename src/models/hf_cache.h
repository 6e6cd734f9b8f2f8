// The Hugging Face hub cache layout, shared with huggingface_hub, llama.cpp and others:
//   $HF_HUB_CACHE (default $HF_HOME/hub, HF_HOME default ~/.cache/huggingface)
//     models--org--repo/blobs/<sha256 or git oid>          file bytes, named by content
//     models--org--repo/blobs/<etag>.incomplete            a download in progress (resumable)
//     models--org--repo/snapshots/<commit>/<path>          → ../../blobs/<etag> (relative link)
//     models--org--repo/refs/<revision>                    the commit a branch/tag resolved to
//     .locks/models--org--repo/<etag>.lock                 one downloader per blob
// A file another tool already downloaded is found here and not fetched again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/repo_file.h"

namespace sf::models {

class hf_cache {
  public:
    /** A cache rooted at `hub_dir` ("" = from the environment, see hub_dir_from_env()). */
    explicit hf_cache(std::string hub_dir = "");

    /** $HF_HOME or ~/.cache/huggingface. */
    static std::string hf_home();
    /** $HF_HUB_CACHE or $HF_HOME/hub. */
    static std::string hub_dir_from_env();

    const std::string &root() const { return root_; }
    std::string repo_dir(const std::string &repo) const;
    std::string blob_path(const std::string &repo, const std::string &etag) const;
    std::string lock_path(const std::string &repo, const std::string &etag) const;
    std::string snapshot_path(const std::string &repo, const std::string &commit,
                              const std::string &file) const;

    /** True when the snapshot entry exists and its blob has `f.size` bytes. */
    bool has_file(const std::string &repo, const std::string &commit, const repo_file &f) const;
    /** Points snapshots/<commit>/<f.path> at the blob (replacing what was there). */
    bool link_snapshot(const std::string &repo, const std::string &commit, const repo_file &f,
                       std::string &error) const;

    /** Records that `rev` resolved to `commit` (not for a revision that is a commit id). */
    void write_ref(const std::string &repo, const std::string &rev,
                   const std::string &commit) const;
    /** The commit `rev` resolved to last time (a 40-hex rev is its own commit). */
    std::optional<std::string> read_ref(const std::string &repo, const std::string &rev) const;

    /** Files present in a snapshot, for resolving offline: sizes from the blobs, SHA-256 from
     *  the blob names when they are 64-hex. */
    std::vector<repo_file> snapshot_files(const std::string &repo, const std::string &commit) const;

    /** Removes the snapshot entries `paths` and every blob of the repo no snapshot links to
     *  any more. Returns the bytes freed. */
    uint64_t remove_files(const std::string &repo, const std::string &commit,
                          const std::vector<std::string> &paths) const;

  private:
    std::string root_;
};

/** True for a 40-hex-digit git commit id. */
bool is_commit_id(const std::string &s);

}  // namespace sf::models
