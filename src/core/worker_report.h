// What a worker reports about itself and its model, and what an embedding call carries, as
// the head sees them (worker_client), whatever the transport. Field meanings and units follow
// proto/worker.proto (HealthReply, CacheStats, ModelInfoReply, EmbedRequest/EmbedReply).
// Plain data: no I/O, no JSON, no gRPC.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/embed_input.h"
#include "core/priority.h"

namespace sf {

/**
 * The worker's exit status when its engine refuses the options it was started with (a model
 * or draft model it cannot load, a draft with another tokenizer, a context it cannot create):
 * sysexits' EX_CONFIG. Starting it again would fail the same way, so the head stops instead.
 */
inline constexpr int k_worker_exit_config = 78;

/** One priority class's share of a worker (index 0 interactive, 1 normal, 2 batch). */
struct class_report {
    std::string name;  // interactive | normal | batch
    int32_t running      = 0;
    int32_t waiting      = 0;
    uint64_t preemptions = 0;  // sequences of this class parked to make room

    bool operator==(const class_report &) const = default;
};

/** The prefix cache's counters (cache/prefix_cache.h cache_stats). Bytes are bytes. */
struct cache_report {
    uint64_t lookups         = 0;  // sequences started
    uint64_t hits            = 0;  // ... that reused at least one cached token
    uint64_t prompt_tokens   = 0;  // prompt tokens of those sequences
    uint64_t cached_tokens   = 0;  // of which reused instead of prefilled
    int64_t ram_bytes        = 0;
    int64_t ram_budget_bytes = 0;  // --cache-ram
    int64_t entries          = 0;
    uint64_t evictions       = 0;
    int64_t disk_bytes       = 0;
    int64_t disk_entries     = 0;
    uint64_t disk_writes     = 0;
    uint64_t disk_loads      = 0;
    uint64_t disk_corrupt    = 0;  // entries discarded as corrupt

    bool operator==(const cache_report &) const = default;
};

/** A worker's state and load (its Health answer). Counters count since the worker started. */
struct worker_status {
    bool ready = false;  // model loaded, accepting sessions
    std::string model_path;
    std::string model_name;
    int32_t n_ctx                   = 0;  // per-sequence context limit in tokens
    int32_t n_parallel              = 0;  // max concurrent sequences
    int32_t active_sequences        = 0;
    int32_t waiting_sessions        = 0;
    uint64_t ticks                  = 0;  // llama_decode calls
    uint64_t batched_ticks          = 0;  // ticks that carried more than one sequence
    uint64_t interrupted_ticks      = 0;  // decodes stopped mid-way for an interactive arrival
    int32_t max_sequences_per_tick  = 0;
    int32_t last_sequences_per_tick = 0;
    uint64_t prompt_tokens_total    = 0;
    uint64_t generated_tokens_total = 0;
    int32_t pid                     = 0;
    std::vector<class_report> classes;  // indexed by class
    uint64_t preemptions       = 0;
    int64_t kv_used_cells      = 0;          // KV cells held by running sequences
    int64_t kv_total_cells     = 0;          // n_ctx * parallel
    int64_t kv_bytes_per_token = 0;          // KV cache bytes per token; 0: not per token (hybrid)
    std::string cache_type_k, cache_type_v;  // KV cache element types
    uint64_t parked_bytes         = 0;       // host memory of preempted sequences
    uint64_t spec_drafted_tokens  = 0;       // speculative draft tokens verified
    uint64_t spec_accepted_tokens = 0;       // ... of which accepted
    cache_report cache;

    bool operator==(const worker_status &) const = default;
};

/** The loaded model's facts (GGUF metadata as llama.cpp renders it), for /api/show, /api/tags. */
struct model_description {
    std::map<std::string, std::string> metadata;
    std::string chat_template;
    uint64_t n_params   = 0;
    uint64_t size_bytes = 0;  // bytes of the weights
    int32_t n_embd      = 0;
    int32_t n_ctx_train = 0;
    std::string architecture;
    std::string file_type;  // e.g. "Q4_K - Medium"
    std::string description;
    std::string tokenizer_fingerprint;  // SHA-256 hex of the vocabulary (equal: same tokenizer)
    std::string engine;                 // implementation and build, e.g. "llama.cpp b1-de3ff81"
    std::string model_fingerprint;      // sampled hash of the model file (identifies the weights)
    std::string devices;                // where the layers run: "CPU" or the GPU devices
    int32_t gpu_layers = 0;             // layers on GPU devices, of n_layers (n_layer + 1)
    int32_t n_layers   = 0;
    bool vision        = false;  // its projector (--mmproj) takes images
    bool audio         = false;  // its projector takes audio

    bool operator==(const model_description &) const = default;
};

/** One node of a cluster as `superfluid nodes` and /api/nodes show it (issue #17). */
struct node_report {
    std::string name;     // "local" for the head's own worker, else the node certificate's CN
    std::string address;  // host:port of its worker ("" for the local one)
    std::string state;    // pending | active | failing | refused | gone
    std::string message;  // why it is refused, when it is
    std::string model_fingerprint, tokenizer_fingerprint;
    int32_t slots         = 0;       // concurrent sequences
    int32_t running       = 0;       // sessions placed on it, not finished
    double last_seen_s    = -1;      // seconds since it last answered (or registered); -1: never
    uint64_t placed_total = 0;       // sessions placed on it so far
    std::string certificate_serial;  // its node certificate's serial (hex); "" for the local one
    std::string engine;              // ModelInfo.engine: implementation and build
    std::string model_name;          // the model it serves (Health.model_name)
    int32_t running_by_class[k_classes] = {0, 0, 0};  // its scheduler's running sequences per class
    int64_t kv_cells                    = 0;          // KV cache cells (n_ctx × slots)
    int64_t kv_bytes_per_token          = 0;          // 0: not per token (hybrid)
    double cache_hit_rate  = 0;  // prompt tokens reused from its prefix cache / prompt tokens
    uint64_t cached_tokens = 0;  // prompt tokens its prefix cache has reused so far
};

/**
 * One served model as /api/ps shows it (issue #40): resident (its worker loaded, or loading),
 * or not, with what keeps it.
 */
struct model_report {
    std::string id;              // the id requests name and answers carry
    std::string path;            // its GGUF file
    bool is_default = false;     // answers unknown names; loaded at start, never unloaded idle
    std::string state;           // unloaded | loading | resident | unloading
    int32_t sessions      = 0;   // sessions placed on it and not finished
    int32_t waiting       = 0;   // requests waiting for it (its load, or room to load it)
    int64_t expires_in_ms = -1;  // resident and idle: unloaded in this many ms; -1: not expiring
    int32_t pid           = -1;  // its worker process (-1 when not resident)
    int32_t starts        = 0;   // worker processes started for it (loads and restarts)
};

/**
 * One placement of a session on a worker (issue #17: "the journal records the move"): the
 * first has from_index 0; each resume after a lost worker or node adds one with a greater
 * epoch (the relay's counter, increasing over all sessions) and the index of the first token
 * it generates.
 */
struct placement_note {
    uint64_t epoch = 0;
    std::string node;        // the cluster node's name; "local" for the head's own worker
    int64_t from_index = 0;  // its first token's index (the resume point)
    int64_t at_ms      = 0;  // unix milliseconds
};

/** Inputs to embed; `truncate` cuts inputs longer than the context instead of refusing them. */
struct embed_batch {
    std::vector<embed_input> inputs;
    bool truncate = false;

    bool operator==(const embed_batch &) const = default;
};

/** One input's vector: n_embd floats, mean-pooled over its tokens, not normalized. */
struct embedding {
    std::vector<float> values;
    int32_t tokens = 0;  // tokens embedded (after truncation)
};

}  // namespace sf
