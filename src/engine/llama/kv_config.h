// The KV cache's element types and flash attention for llama_engine (--cache-type-k/-v and
// --flash-attn, as llama-server names them), and what one token of KV cache costs.
// Called on the loading thread only, before the tick loop starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct llama_context_params;
struct llama_model;

namespace sf {

struct llama_engine_options;

/** The KV cache type names llama_engine_options accepts (llama-server's list). */
const std::vector<std::string> &kv_cache_type_names();

/**
 * Sets the context's type_k, type_v and flash_attn_type from `opts`. False with `error` naming
 * the value and the accepted ones when a name is unknown.
 */
bool apply_kv_options(const llama_engine_options &opts, llama_context_params &cp,
                      std::string &error);

/**
 * Bytes of KV cache one token takes in every attention layer, from the GGUF metadata
 * (block_count, attention.head_count_kv, attention.key_length/value_length) and the element
 * types: the figure `/metrics` and `/api/ps` report. 0 for recurrent and hybrid models, whose
 * layers do not all hold KV (their state is per sequence, not per token).
 */
int64_t kv_bytes_per_token(const llama_model *model, const llama_engine_options &opts);

/**
 * How many sequences run at once when --parallel is not given (issue #18): admission is
 * bounded by KV memory and --max-seqs, not by a slot count. Each sequence has its own KV
 * stream of ctx_size tokens (with --no-kv-unified; the pool's size uses it too), so the count is
 * what `kv_memory` bytes of streams hold, at most `max_seqs`. `kv_memory` 0 (auto): a quarter
 * of MemAvailable, never less than the 8 sequences that were the fixed default before (a
 * 24 GiB machine: 128 sequences of 8,192 tokens of the 42 M-parameter bench model, 2 GiB; 8 of
 * Qwen3-0.6B's, 7.3 GiB). Recurrent and hybrid models keep 8: their state is per sequence and
 * is not counted per token. `why` tells how the figure came about, for the log.
 * `gpu_free` > 0 (bytes free on the GPU devices the layers go to, issue #41): the KV cache
 * lives there, so auto takes a quarter of that instead of MemAvailable.
 */
int32_t auto_sequences(const llama_model *model, const llama_engine_options &opts, std::string &why,
                       int64_t gpu_free = 0);

/**
 * Fills in opts.ctx_size, opts.parallel and (pooled) opts.pool_cells (issue #36). Pooled: one
 * KV pool whose size is --kv-memory, or --parallel x --ctx-size when both are given, or what
 * auto_sequences gives 8,192-token sequences (the same bytes as the streams before the pool:
 * a quarter of MemAvailable, at least 8 and at most --max-seqs sequences' worth); as many
 * sequences as --parallel, else --max-seqs (at most 256, llama.cpp's LLAMA_MAX_SEQ), take
 * cells from it as they hold tokens; one request may hold up to --ctx-size tokens, by default
 * the model's training context, at most the pool. Not pooled: ctx_size defaults to 8,192 (at
 * most the training context) and parallel to auto_sequences. `why` is for the log.
 */
void size_kv(const llama_model *model, llama_engine_options &opts, bool pooled, int64_t gpu_free,
             std::string &why);

}  // namespace sf
