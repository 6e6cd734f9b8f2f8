// Multi-token prediction (--spec-type mtp, issue #21): drafts from the model's own NextN block
// (GLM-4.5, DeepSeek-V3, Qwen3.5 and others carry one after the trunk). The block takes the
// trunk's last hidden state at position p and the token at p+1 and gives logits for p+2, so it
// drafts with one small decode per draft token and no second model. Verification stays with
// the target (scheduler_speculation.cpp): a draft only changes how many tokens a tick yields,
// never which.
//
// The block has its own attention, so its context (a llama.cpp context of type
// LLAMA_CONTEXT_TYPE_MTP on the target's model, one KV stream per target sequence) must see
// every position of a sequence: after each target decode, observe() feeds it the pairs
// (token at k, trunk hidden state at k-1) of the batch, as llama.cpp's draft-mtp does
// (common/speculative.cpp, process). The hidden states come from the target context, which
// outputs them for every row (llama_set_embeddings_nextn, unmasked).
//
// What the block's memory holds is tracked per sequence as the next position it expects. When
// the target's memory changes in another way (a prefix copied in, a state loaded, a parked
// sequence resumed), forget() empties the sequence's stream and it starts again from the next
// batch: positions whose hidden states were never computed here are simply missing from the
// block's attention, which makes drafts worse, never the stream different.
//
// Thread: the scheduler's tick thread only (like every engine_i sequence call).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "engine/engine.h"

struct llama_model;
struct llama_context;
struct llama_batch;
struct ggml_threadpool;

namespace sf {

/** Options of the MTP drafter (units: tokens, threads). */
struct mtp_drafter_options {
    int32_t ctx_size = 8192;  // per-sequence context, the target's
    int32_t n_seq    = 1;     // the target's sequences (one KV stream each)
    int32_t n_batch  = 512;   // most tokens in one target decode (observe() takes them all)
    int32_t threads  = 1;
    // The target's persistent compute threadpool, shared (both contexts run on the tick
    // thread, one after the other); null: ggml starts threads per decode.
    ggml_threadpool *threadpool = nullptr;
};

class mtp_drafter {
  public:
    /**
     * Creates the MTP context on `model` (loaded with llama_model_params::load_mtp) and makes
     * `target` output its hidden states for every row. Throws std::runtime_error when the
     * model has no NextN block or the context cannot be created.
     */
    mtp_drafter(llama_model *model, llama_context *target, const mtp_drafter_options &opts);
    ~mtp_drafter();
    mtp_drafter(const mtp_drafter &)            = delete;
    mtp_drafter &operator=(const mtp_drafter &) = delete;

    /**
     * After a successful decode of `batch` on the target context: runs the block over the
     * batch's positions (one decode, no logits) and keeps each sequence's last hidden states
     * of this batch (its token and draft, at most k_spec_draft_limit + 1) for trim() and
     * draft(). A failed decode of the block empties the streams of
     * the batch's sequences (no drafts for them until their next batch).
     */
    void observe(const llama_batch &batch);

    /** The target kept positions [0, n) of `seq`: the block's stream is cut to match. */
    void trim(int seq, int32_t n);

    /** The target's memory of `seq` was replaced or emptied: its stream starts over. */
    void forget(int seq);

    /**
     * Drafts for every request at once: the block's greedy guesses after each request's
     * tokens, one batched decode per draft position. A request gets a draft only when the
     * block's stream of its sequence reaches just before its last token (the token decoded
     * next); `out` is empty otherwise. The block's memory is left as before the call.
     */
    void draft(std::span<draft_request> reqs);

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace sf
