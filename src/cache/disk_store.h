// The prefix cache's disk tier: saved sequence states of hot prefixes, one file each under
// DIR/<model fingerprint>/, named by the SHA-256 of the prefix's token ids. Files are written
// by a background thread (temporary name, then rename), bounded in total size (least recently
// used deleted first) and checksummed: an entry whose checksum, size or header does not match
// is deleted with a log line and never loaded. Thread-safe.
//
// File format (little endian): "SFPC" | u32 version 1 | u32 n_tokens | u64 payload bytes |
// n_tokens × i32 token ids | payload (llama_state_seq_get_data) | SHA-256 of all the above.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cache/radix_tree.h"
#include "util/host_buffer.h"

namespace sf::cache {

/**
 * Identifies a model file for on-disk keys: SHA-256 (hex, first 32 digits) over its size and
 * sampled contents (the first and last 4 MiB and 64 evenly spaced 64 KiB blocks), so a
 * multi-GB model is fingerprinted in milliseconds; any re-quantization or different weights
 * change it. Empty when the file cannot be read.
 */
std::string model_fingerprint(const std::string &model_path);

/** The file name of the entry for `tokens`: SHA-256 of the token ids (hex, 32 digits) + ".sfpc". */
std::string entry_file_name(std::span<const token_id> tokens);

/** Counters of the disk tier. */
struct disk_stats {
    int64_t bytes    = 0;  // bytes of entry files
    int64_t entries  = 0;
    uint64_t writes  = 0;  // files written
    uint64_t loads   = 0;  // entries loaded (checksum verified)
    uint64_t corrupt = 0;  // entries discarded as corrupt
    uint64_t evicted = 0;  // entries deleted to stay under the size bound
};

/**
 * A verified entry's payload, mapped read-only from its file (mmap): no buffer to allocate and
 * copy into. On the 2-core VM, faulting in a fresh 3.3 MB buffer and copying a file into it took
 * 20-30 ms; mapped page-cache pages cost a fraction. The mapping stays valid if the file is
 * deleted meanwhile (entries are never rewritten in place). Move-only.
 */
class mapped_payload {
  public:
    mapped_payload() = default;
    ~mapped_payload();
    mapped_payload(mapped_payload &&o) noexcept;
    mapped_payload &operator=(mapped_payload &&o) noexcept;
    mapped_payload(const mapped_payload &)            = delete;
    mapped_payload &operator=(const mapped_payload &) = delete;
    std::span<const uint8_t> payload() const;

  private:
    friend class disk_store;
    void reset();
    void *base_  = nullptr;  // the whole file
    size_t size_ = 0;
    size_t off_ = 0, len_ = 0;  // the payload within it
};

class disk_store {
  public:
    /**
     * Opens (creating) `dir`/`fingerprint` and indexes its entries (headers only). Entries
     * with a broken header are deleted. `max_bytes` bounds the files' total size.
     */
    disk_store(std::string dir, const std::string &fingerprint, int64_t max_bytes);
    ~disk_store();
    disk_store(const disk_store &)            = delete;
    disk_store &operator=(const disk_store &) = delete;

    /** Longest entry (whole) or common prefix (shared) with `prompt`; see radix_tree::find. */
    radix_tree::match find(std::span<const token_id> prompt, int32_t max_len) const;
    /** Tokens of entry `id`. */
    std::vector<token_id> tokens(int64_t id) const;
    /**
     * Maps entry `id` and verifies its checksum; `out.payload()` is then its payload. A corrupt
     * or unreadable entry is deleted (logged) and false returned. Entries verified at start
     * (the most recently used, in the background) skip the checksum while their file is
     * unchanged: hashing a 3.3 MB entry took ~4 ms of a restored request's first token.
     */
    bool load(int64_t id, mapped_payload &out);
    /** Queues `payload` (the state of `tokens`) for writing; no-op when already stored. */
    void store(std::span<const token_id> tokens, host_buffer payload);
    /** True when an entry for exactly `tokens` is stored or queued. */
    bool has(std::span<const token_id> tokens) const;
    /** Waits until the start's verification is done and queued writes are on disk. */
    void flush();
    disk_stats stats() const;
    const std::string &dir() const { return dir_; }

  private:
    struct entry {
        std::string path;
        int64_t bytes      = 0;
        uint64_t last_used = 0;
        bool written       = false;  // false while queued
        // Checksum verified at start (verify_recent); trusted while the file keeps this mtime.
        bool verified = false;
        std::filesystem::file_time_type verified_mtime{};
    };
    struct job {
        int64_t id;
        std::vector<token_id> tokens;
        host_buffer payload;
    };
    void writer_loop();
    void verify_recent();
    static bool map_entry(const std::string &path, bool check, mapped_payload &out);
    void remove_locked(int64_t id, bool corrupt);
    void enforce_bound_locked();

    std::string dir_;
    int64_t max_bytes_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    radix_tree index_;
    std::map<int64_t, entry> entries_;
    std::map<std::string, int64_t> by_name_;  // file name → id
    std::deque<job> queue_;
    std::vector<int64_t> to_verify_;  // most recently used first, verified by the writer thread
    bool verifying_  = false;
    bool stopping_   = false;
    bool busy_       = false;
    int64_t next_id_ = 1;
    uint64_t clock_  = 0;
    disk_stats stats_;
    std::thread writer_;
};

}  // namespace sf::cache
