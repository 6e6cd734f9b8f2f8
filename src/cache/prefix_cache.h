// The prefix cache: prompt prefixes whose model state was already computed, reused by later
// sequences so that only the rest of their prompt is prefilled. Shared across requests and
// clients; owned by the worker, driven by the scheduler's tick thread.
//
// Two kinds of entries, after what the engine's memory allows (engine_i::partial_prefixes):
// * Attention-only models: any prefix is reusable. A new sequence gets the longest common
//   prefix with any entry, or with a live sequence. Each sequence has its own KV stream
//   (attention then scans only its own cells, see llama_engine.cpp), so an entry is a host
//   copy of a finished sequence's state (engine_i::seq_save), loaded into the new sequence
//   and cut back to the common prefix; a live source is copied the same way
//   (engine_i::seq_share).
// * Recurrent and hybrid models: their state cannot be cut back, so the cache holds host
//   snapshots (engine_i::seq_save) taken at message boundaries of the rendered chat (end of
//   the system prompt, of each earlier turn; scheduler decodes up to them exactly), at the
//   end of the prompt but one token, and at the end of each finished sequence (the next turn
//   of the conversation extends it). A new sequence restores the longest snapshot that is
//   whole a prefix of its prompt.
// Both are indexed by a radix tree over token ids (radix_tree.h).
//
// Budget: entries' bytes (the host memory a saved state holds: host_buffer capacity, whole
// 2 MiB pages from 1 MiB on; a snapshot mapped from the disk tier counts its size) stay within
// `ram_bytes`; live sequences are never touched. The
// victim is the entry with the lowest score last_use + 32 × log2(1 + hits) on a clock that
// ticks once per cache use: least recently used, with a prefix shared by many sequences
// living as long as one used up to 32·log2(1+hits) uses more recently.
//
// Disk tier (disk_store.h): a prefix reused by a second sequence is hot; its state is written
// to disk, and a sequence whose prompt a disk entry serves better than memory loads it.
//
// Scopes (issue #38; session/cache_scope.h): every call names the sequence's scope (0: the
// shared one). An entry of scope s is keyed by two marker ids made from s (negative: no token
// has one) followed by its tokens, in the radix tree and on disk alike, so a lookup never
// matches an entry of another scope; scope 0 has no markers (its disk files keep their names).
// Live sources and a slot's held memory are the caller's to filter (scheduler_reuse.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/disk_store.h"
#include "cache/radix_tree.h"
#include "engine/engine.h"

namespace sf::cache {

struct cache_options {
    int64_t ram_bytes = int64_t(4096) << 20;   // 0: no cache at all (every prompt prefilled)
    std::string disk_dir;                      // "" : no disk tier
    int64_t disk_bytes = int64_t(8192) << 20;  // bound of the disk tier's files
    std::string model_fingerprint;             // names the disk tier's subdirectory
    int32_t min_disk_tokens = 32;              // shorter prefixes are not worth a file
};

/** Counters for /metrics. */
struct cache_stats {
    uint64_t lookups       = 0;  // sequences that asked
    uint64_t hits          = 0;  // ... and reused at least one token
    uint64_t prompt_tokens = 0;  // tokens of their prompts
    uint64_t cached_tokens = 0;  // tokens reused instead of prefilled
    int64_t ram_bytes      = 0;  // bytes held by entries
    int64_t ram_budget     = 0;
    int64_t entries        = 0;
    uint64_t evictions     = 0;
    disk_stats disk;
};

/** Length of the longest common prefix of `a` and `b`, at most `max_len` (< 0: 0). */
int32_t common_prefix(std::span<const token_id> a, std::span<const token_id> b, int32_t max_len);

/**
 * The 64-bit id the cache keys a request's scope on (GenerateRequest.cache_scope): 0 for "",
 * else its 16 hex digits as a number (any other text, from a foreign head, is hashed; never 0).
 */
uint64_t cache_scope_id(std::string_view scope);

/** A live sequence whose memory holds `tokens` (positions 0..size-1). */
struct live_source {
    int seq = 0;
    std::span<const token_id> tokens;
};

class prefix_cache {
  public:
    /** `engine` must outlive the cache. */
    prefix_cache(engine_i &engine, cache_options opts);
    ~prefix_cache();

    bool enabled() const { return opts_.ram_bytes > 0; }
    /** True when prefixes are shared partially (attention KV), false for snapshots. */
    bool partial() const { return partial_; }

    /**
     * Tokens of `prompt` (at most `max_len`) that attach() would reuse now. Tick thread.
     */
    int32_t peek(std::span<const token_id> prompt, int32_t max_len,
                 const std::vector<live_source> &live, uint64_t scope = 0) const;
    /**
     * Loads the longest reusable prefix of `prompt` (at most `max_len` tokens) into the empty
     * live sequence `seq`; returns its length (0: nothing reused). Counts the lookup. `live`
     * holds only sources of `scope` (the caller filters them).
     */
    int32_t attach(int seq, std::span<const token_id> prompt, int32_t max_len,
                   const std::vector<live_source> &live, uint64_t scope = 0);
    /**
     * The caller gave the empty-looking sequence `seq` the first `n` tokens of `prompt` from
     * what its own memory still held (scheduler slot reuse, no copy): counts the lookup and
     * the hit as attach() would, and keeps a hot prefix on disk. `seq` holds exactly those
     * `n` tokens now.
     */
    void reused_in_place(int seq, std::span<const token_id> prompt, int32_t n, uint64_t scope = 0);
    /** Snapshot mode: live `seq` holds exactly `tokens`; keeps a snapshot of it. */
    void snapshot(int seq, std::span<const token_id> tokens, uint64_t scope = 0);
    /**
     * The live sequence `seq` (memory holding `tokens`) ends: keeps its state as an entry,
     * before the caller frees the sequence.
     */
    void retain(int seq, std::span<const token_id> tokens, uint64_t scope = 0);
    /** Thread-safe. */
    cache_stats stats() const;
    /** Waits for queued disk writes (tests, shutdown). */
    void flush();

  private:
    struct entry {
        host_buffer snapshot;
        mapped_payload mapped;  // a snapshot read from the disk tier, kept mapped (no copy)
        std::span<const uint8_t> state() const {
            return snapshot.empty() ? mapped.payload() : snapshot.span();
        }
        int64_t bytes      = 0;
        uint64_t last_used = 0;
        uint32_t hits      = 0;
    };
    int64_t add(std::span<const token_id> tokens, entry e);
    void remove(int64_t id);
    void enforce_budget(int64_t keep = -1);
    int64_t victim(int64_t keep) const;
    void touch(int64_t id);
    void write_to_disk(int seq, std::span<const token_id> key, int32_t markers);
    bool load_from_disk(int seq, int64_t disk_id, int32_t n, int32_t markers);
    void publish();

    engine_i &engine_;
    cache_options opts_;
    bool partial_ = false;
    radix_tree tree_;
    std::map<int64_t, entry> entries_;
    int64_t next_id_ = 1;
    uint64_t clock_  = 0;
    int64_t bytes_   = 0;
    std::unique_ptr<disk_store> disk_;

    mutable std::mutex stats_mu_;
    cache_stats stats_;
};

}  // namespace sf::cache
