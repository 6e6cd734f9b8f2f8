#include "engine/llama/kv_config.h"

#include <algorithm>

#include "util/proc_memory.h"

#include <ggml.h>
#include <llama.h>

#include <cstdlib>
#include <vector>

#include "engine/llama/llama_engine.h"

namespace sf {

namespace {

// llama-server's accepted cache types (common/arg.cpp kv_cache_types).
const std::vector<ggml_type> k_types = {GGML_TYPE_F32,    GGML_TYPE_F16,  GGML_TYPE_BF16,
                                        GGML_TYPE_Q8_0,   GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
                                        GGML_TYPE_IQ4_NL, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1};

bool type_from_name(const std::string &name, ggml_type &out) {
    for (ggml_type t : k_types) {
        if (name == ggml_type_name(t)) {
            out = t;
            return true;
        }
    }
    return false;
}

// A numeric GGUF value of the model's architecture, or `fallback`.
int64_t arch_meta(const llama_model *m, const std::string &arch, const char *key,
                  int64_t fallback) {
    char buf[64]        = {0};
    const std::string k = arch + "." + key;
    if (llama_model_meta_val_str(m, k.c_str(), buf, sizeof buf) <= 0) return fallback;
    return std::strtoll(buf, nullptr, 10);
}

}  // namespace

const std::vector<std::string> &kv_cache_type_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (ggml_type t : k_types) v.emplace_back(ggml_type_name(t));
        return v;
    }();
    return names;
}

bool apply_kv_options(const llama_engine_options &opts, llama_context_params &cp,
                      std::string &error) {
    auto list = [] {
        std::string s;
        for (const auto &n : kv_cache_type_names()) s += (s.empty() ? "" : ", ") + n;
        return s;
    };
    if (!type_from_name(opts.cache_type_k, cp.type_k)) {
        error = "unknown --cache-type-k '" + opts.cache_type_k + "' (one of: " + list() + ")";
        return false;
    }
    if (!type_from_name(opts.cache_type_v, cp.type_v)) {
        error = "unknown --cache-type-v '" + opts.cache_type_v + "' (one of: " + list() + ")";
        return false;
    }
    if (opts.flash_attn == "auto") {
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
    } else if (opts.flash_attn == "on") {
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
    } else if (opts.flash_attn == "off") {
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    } else {
        error = "unknown --flash-attn '" + opts.flash_attn + "' (one of: auto, on, off)";
        return false;
    }
    return true;
}

int64_t kv_bytes_per_token(const llama_model *m, const llama_engine_options &opts) {
    if (llama_model_is_recurrent(m) || llama_model_is_hybrid(m)) return 0;
    ggml_type tk = GGML_TYPE_F16, tv = GGML_TYPE_F16;
    type_from_name(opts.cache_type_k, tk);
    type_from_name(opts.cache_type_v, tv);
    char arch_buf[64] = {0};
    if (llama_model_meta_val_str(m, "general.architecture", arch_buf, sizeof arch_buf) <= 0)
        return 0;
    const std::string arch = arch_buf;
    const int64_t n_head   = llama_model_n_head(m);
    const int64_t head_dim = n_head > 0 ? llama_model_n_embd(m) / n_head : 0;
    const int64_t n_kv     = llama_model_n_head_kv(m);
    const int64_t k_len    = arch_meta(m, arch, "attention.key_length", head_dim);
    const int64_t v_len    = arch_meta(m, arch, "attention.value_length", k_len);
    const int64_t layers   = llama_model_n_layer(m);
    return layers *
           static_cast<int64_t>(ggml_row_size(tk, n_kv * k_len) + ggml_row_size(tv, n_kv * v_len));
}

void size_kv(const llama_model *m, llama_engine_options &opts, bool pooled, int64_t gpu_free,
             std::string &why) {
    constexpr int32_t k_stream_ctx = 8192;  // a stream's default context (before the pool)
    const int32_t train            = llama_model_n_ctx_train(m);
    if (!pooled) {
        if (opts.ctx_size <= 0)
            opts.ctx_size = train > 0 ? std::min(train, k_stream_ctx) : k_stream_ctx;
        if (opts.parallel <= 0) opts.parallel = auto_sequences(m, opts, why, gpu_free);
        why = std::to_string(opts.parallel) + " streams of " + std::to_string(opts.ctx_size) +
              " tokens" + (why.empty() ? "" : " (" + why + ")");
        return;
    }
    const int64_t per_token = kv_bytes_per_token(m, opts);
    std::string how;
    if (opts.kv_memory > 0) {
        opts.pool_cells = opts.kv_memory / per_token;
        how             = "--kv-memory " + std::to_string(opts.kv_memory >> 20) + " MiB";
    } else if (opts.parallel > 0 && opts.ctx_size > 0) {
        opts.pool_cells = int64_t(opts.parallel) * opts.ctx_size;
        how             = "--parallel x --ctx-size";
    } else {
        llama_engine_options o = opts;
        o.ctx_size             = k_stream_ctx;
        o.parallel             = 0;
        opts.pool_cells        = int64_t(auto_sequences(m, o, how, gpu_free)) * k_stream_ctx;
    }
    opts.pool_cells = std::clamp<int64_t>(opts.pool_cells, 256, int64_t(1) << 30);
    if (opts.parallel <= 0) opts.parallel = std::clamp(opts.max_seqs, 1, 256);
    const int64_t cap = opts.ctx_size > 0 ? opts.ctx_size : (train > 0 ? train : k_stream_ctx);
    opts.ctx_size     = static_cast<int32_t>(std::min(cap, opts.pool_cells));
    why               = "one pool of " + std::to_string(opts.pool_cells) + " tokens (" +
          std::to_string((opts.pool_cells * per_token) >> 20) + " MiB; " + how + ") for up to " +
          std::to_string(opts.parallel) + " sequences, at most " + std::to_string(opts.ctx_size) +
          " tokens each";
}

int32_t auto_sequences(const llama_model *m, const llama_engine_options &opts, std::string &why,
                       int64_t gpu_free) {
    constexpr int32_t k_floor = 8;  // the fixed default before issue #18
    const int32_t cap         = std::max(opts.max_seqs, 1);
    const int64_t per_token   = kv_bytes_per_token(m, opts);
    if (per_token <= 0) {
        why = "a recurrent or hybrid model: its state is per sequence";
        return std::min(k_floor, cap);
    }
    const int64_t per_seq = per_token * std::max(opts.ctx_size, 1);
    int64_t budget        = opts.kv_memory;
    if (budget > 0) {
        why = "--kv-memory " + std::to_string(budget >> 20) + " MiB";
    } else {
        const int64_t avail = gpu_free > 0 ? gpu_free : mem_available_bytes();
        budget = std::max(k_floor * per_seq, std::min(cap * per_seq, avail > 0 ? avail / 4 : 0));
        why    = std::string("a quarter of ") +
              (gpu_free > 0 ? "the GPU's free memory (" : "MemAvailable (") +
              std::to_string(avail >> 20) + " MiB), at least " + std::to_string(k_floor) +
              " sequences";
    }
    const auto n = static_cast<int32_t>(std::clamp<int64_t>(budget / per_seq, 1, cap));
    why += ": " + std::to_string(n) + " sequences of " + std::to_string(per_seq >> 20) +
           " MiB KV (at most --max-seqs " + std::to_string(cap) + ")";
    return n;
}

}  // namespace sf
