// `superfluid serve [MODEL.gguf]`: the head. Starts the worker child, serves HTTP.
#pragma once

#include <string>
#include <vector>

#include "core/session_event.h"

namespace sf {

struct serve_options {
    std::string model;  // a .gguf path or org/repo[:TAG][@rev]; empty = the default model
    // Several models (issue #40, cli/serve_models.h): each like `model`; non-empty: `model` is
    // ignored. The first (or `default_model`) answers unknown names and loads at start.
    std::vector<std::string> models;
    std::string default_model;       // --default-model: which served model is the default
    int64_t keep_alive_ms = 300000;  // --keep-alive: idle time before a model unloads; <0 never
    int max_models        = 0;       // --max-models: most models resident at once; 0: no limit
    std::string host      = "127.0.0.1";
    int port              = 8453;
    int ctx_size          = 0;      // most tokens per sequence; 0: the model's training context
    bool kv_unified       = true;   // one KV pool for all sequences; --no-kv-unified: streams
    bool ctx_size_given   = false;  // --ctx-size on the command line (a cap is warned about)
    int parallel          = 0;      // concurrent sequences; 0: from KV memory (kv_config.h)
    int max_seqs          = 128;    // most sequences when `parallel` is 0
    int64_t kv_memory_mib = 0;      // KV memory for them, MiB; 0: a quarter of MemAvailable
    int batch_size        = 512;    // tokens per tick
    int prefill_chunk     = 512;    // prompt tokens per sequence per tick
    int tick_ms           = 30;     // target tick duration with prefill, ms (0: fixed budget)
    int threads           = 0;      // 0 = all CPUs
    int http_threads      = 256;    // requests handled at once (http/event_server.h)
    double header_timeout_s =
        30;  // request line + headers must arrive within (http/event_server.h)
    size_t max_body_bytes = 32u << 20;
    std::string state_dir;  // empty = XDG state dir
    // JSON: default_priority, priority_rules (api/common/priority.h)
    std::string config_file;
    std::vector<std::string> api_keys;  // --api-key: required of every API request when set
    std::string api_key_file;  // --api-key-file: more keys, one a line (+ SUPERFLUID_API_KEY)
    std::vector<std::string> admin_keys;     // --admin-key: keys that see and use every session
    std::string admin_key_file;              // --admin-key-file (+ SUPERFLUID_ADMIN_KEY)
    std::vector<std::string> cors_origins;   // --cors-origin: web page origins allowed
    std::vector<std::string> allowed_hosts;  // --allowed-host: Host names served on loopback
    priority_class default_priority = priority_class::NORMAL;
    bool strict_model_names         = false;  // unknown model names: 404, not the served model
    int64_t aging_ms                = 10000;  // scheduler aging step (scheduler.h)
    // Fairness within a class (scheduler/service_policy.h, where the defaults are explained).
    int64_t service_half_life_ms = 5000;
    int32_t preempt_quantum      = 512;
    double min_share             = 0;
    int max_queue                = 1024;  // waiting sessions per class before overload errors
    int64_t cache_ram            = int64_t(4096) << 20;  // prefix cache budget, bytes
    std::string cache_dir;  // disk tier; empty = XDG cache dir, "off" = none
    int64_t cache_disk       = int64_t(8192) << 20;  // disk tier bound, bytes
    std::string cache_type_k = "f16";  // KV cache element types (llama-server's names)
    std::string cache_type_v = "f16";
    std::string flash_attn   = "auto";  // auto | on | off
    std::string repack       = "on";    // on | off: weight repacking (llama_engine_options)
    // GPU offload (engine/llama/gpu_offload.h): auto | all | N layers; the device of an unsplit
    // model; proportions per device ("3,1"; empty: by free memory).
    std::string gpu_layers = "auto";
    int32_t main_gpu       = 0;
    std::string tensor_split;
    // Speculative decoding (engine/llama/speculation.h): none | ngram | draft; draft tokens per
    // tick; the draft model (a .gguf path or a hub reference, resolved like the model).
    std::string spec_type = "none";
    std::string model_draft;
    int32_t spec_draft_max = 8;
    std::string standby    = "auto";  // hot standby worker: auto | on | off (worker_process.h)
    // The model's multimodal projector (an mmproj .gguf path, issue #42); "" text-only.
    std::string mmproj;
    // The token journal (src/journal): STATE/journal.db.
    bool journal              = true;           // --journal on|off (off: for benchmarks)
    std::string journal_sync  = "normal";       // off | normal | full (SQLite PRAGMA synchronous)
    int64_t journal_max_age_s = 7 * 24 * 3600;  // finished sessions kept this long
    int64_t journal_max_bytes = 256ll << 20;    // and at most this much data
    bool retry_resume         = true;  // a retried request attaches (session/retry_index.h)
    // Prefix cache sharing between API keys (session/cache_scope.h): "key" (each key's own,
    // when there are several keys) | "all" (shared across keys).
    std::string cache_share   = "key";
    int64_t journal_max_pages = 0;  // hidden, tests: PRAGMA max_page_count (a "full disk")
    std::string scripted_output;    // hidden, tests: the worker answers from this script
    // Cluster mode (issue #17): a guest port for `superfluid join`, sessions placed on nodes.
    bool cluster           = false;
    int guest_port         = 8454;
    std::string guest_host = "0.0.0.0";
    int node_lost_after_s  = 180;   // a guest silent this long is shown lost (node_pool.h)
    bool local_worker      = true;  // --no-local-worker: the head only routes
};

/** The `superfluid worker …` command line serve and join start (argv[0] = this executable). */
std::vector<std::string> worker_argv(const serve_options &opts, const std::string &model);

/**
 * Parses a size: a plain number is MiB; units B, K/KB/KiB, M/MB/MiB, G/GB/GiB (all binary,
 * case-insensitive). False when `text` is not a non-negative size.
 */
bool parse_size_mib(const std::string &text, int64_t &bytes);

/**
 * Caps `opts.ctx_size` at the training context of the GGUF model at `model_path`
 * ({arch}.context_length), with a warning when --ctx-size asked for more.
 */
void cap_ctx_size(serve_options &opts, const std::string &model_path);

/** Runs the head until SIGINT/SIGTERM. Returns the exit code. */
int run_serve(const serve_options &opts);

/** This executable's path (/proc/self/exe), to start `superfluid worker` or `serve`. */
std::string self_exe();

/** The embedded test model's name (the id clients see), served offline without a model. */
inline constexpr const char *kEmbeddedModelName = "superfluid-tiny";

/** The default model's path under `state_dir`, written on first use (random weights). */
std::string ensure_default_model(const std::string &state_dir, std::string &error);

}  // namespace sf
