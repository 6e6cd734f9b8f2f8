// Fetches one hub file into the cache's blobs/ directory, resumably and verified:
//  * bytes go to blobs/<etag>.incomplete; a later run (or a retry after a dropped connection)
//    continues with a Range request from the bytes already there, never fetching them again;
//  * the finished file must have the published size and SHA-256 (LFS oid; non-LFS files: the
//    git blob id, a SHA-1) before it is renamed to blobs/<etag> (same directory: atomic);
//    a mismatch deletes the partial file;
//  * concurrent pulls of one blob, from this or other processes, are serialized by an flock on
//    .locks/…/<etag>.lock: the second one waits and then finds the finished blob.
// Interrupting (keep_going() false, e.g. Ctrl-C) leaves the .incomplete file for later.
#pragma once

#include <functional>
#include <string>

#include "models/http_fetch.h"
#include "models/repo_file.h"

namespace sf::models {

struct download_callbacks {
    std::function<void(uint64_t completed, uint64_t total)> progress;  // bytes of this file
    std::function<void(const std::string &)> note;                     // waiting, retrying, …
    std::function<bool()> keep_going;                                  // false = stop now
    std::function<void()> verifying;                                   // hashing is done
};

enum class download_result { OK, INTERRUPTED, FAILED };

class blob_downloader {
  public:
    explicit blob_downloader(const http_fetch &http) : http_(http) {}

    /** Makes `blob_path` hold `f`'s verified bytes, fetching from `url` what is missing. */
    download_result fetch(const std::string &url, const repo_file &f, const std::string &blob_path,
                          const std::string &lock_path, const download_callbacks &cb,
                          std::string &error) const;

  private:
    download_result fetch_locked(const std::string &url, const repo_file &f,
                                 const std::string &blob_path, const download_callbacks &cb,
                                 std::string &error) const;

    const http_fetch &http_;
};

}  // namespace sf::models
