// Pooled sentence embeddings over an already loaded llama_model, for /v1/embeddings and
// Ollama's /api/embed. It owns a second llama_context (embeddings on, mean pooling, one
// sequence) over the same weights, created on first use, so embedding never joins the tick
// loop's batch: the generation context and its KV cells are untouched, and an input's vector
// never depends on what else runs (each input is decoded alone; case B25).
// Thread-safe: calls are serialized by a mutex (they may run beside the tick thread; they
// share the CPU with it, not state).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/embed_input.h"
#include "core/submit_result.h"

struct llama_model;
struct llama_context;

namespace sf {

/** One result: mean-pooled over the input's tokens, not normalized. */
struct embed_result {
    std::vector<float> values;
    int32_t tokens = 0;  // tokens embedded (after truncation)
};

class llama_embedder {
  public:
    /** `n_ctx`: the most tokens one input may have; `threads`: decode threads. */
    llama_embedder(llama_model *model, int32_t n_ctx, int32_t threads);
    ~llama_embedder();

    /**
     * Embeds each input in order. An empty input, a token id outside the vocabulary, or an
     * input longer than n_ctx without `truncate` fails: returns false with `err` (INVALID_REQUEST
     * or CONTEXT_LENGTH, param "input"; INTERNAL when llama.cpp fails).
     */
    bool embed(const std::vector<embed_input> &inputs, bool truncate,
               std::vector<embed_result> &out, start_error &err);

  private:
    bool ensure_context(std::string &error);

    llama_model *model_;
    int32_t n_ctx_;
    int32_t threads_;
    std::mutex mu_;
    llama_context *ctx_ = nullptr;
};

}  // namespace sf
