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

}  // namespace sf
