// The draft model of speculative decoding with --model-draft (issue #21): a second, smaller
// llama.cpp model with the target's vocabulary proposes the next tokens of many sequences at
// once, greedily, in a few batched decodes on its own context. Verification stays with the
// target (scheduler_speculation.cpp), so a draft only changes how many tokens a tick yields,
// never which: the stream is the one without speculation.
//
// The draft context has `lanes` KV streams. A lane remembers the tokens its memory holds and
// catches up by comparing token lists, not by mirroring the target's memory operations: the
// prefix cache moves, trims, saves and restores the target's sequences (seq_share, seq_load,
// parking) in ways a mirror would have to follow one by one. A sequence keeps its lane from
// tick to tick (only its new tokens are decoded); a newcomer takes the free lane whose memory
// shares the longest prefix with it, else the lane used longest ago. When more sequences
// draft in one tick than there are lanes, the rest go without a draft that tick.
//
// Thread: the scheduler's tick thread only (like every engine_i sequence call).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"

struct llama_model;
struct ggml_threadpool;

namespace sf {

/** Options of a draft model (units: tokens, threads). */
struct draft_model_options {
    std::string path;         // GGUF file of the draft model
    int32_t ctx_size = 8192;  // per-lane context, the target's per-sequence context
    int32_t lanes    = 8;     // KV streams: sequences that can draft in one tick
    int32_t threads  = 1;
    // The target's persistent compute threadpool, shared (both contexts run on the tick
    // thread, one after the other); null: ggml starts threads per decode.
    ggml_threadpool *threadpool = nullptr;
};

class draft_model {
  public:
    /**
     * Loads the draft model and checks that its vocabulary is the target's: the same type,
     * the same number of tokens, the same text for every token id and the same BOS/EOS. Draft
     * token ids go into the target's batch as they are, so any difference is refused. Throws
     * std::runtime_error with a message naming the first difference.
     */
    draft_model(const draft_model_options &opts, const llama_model *target);
    ~draft_model();
    draft_model(const draft_model &)            = delete;
    draft_model &operator=(const draft_model &) = delete;

    /**
     * Drafts for every request at once: catches each request's lane up to its tokens, then
     * decodes up to n_max greedy tokens for all lanes together, one batched decode per draft
     * position. Fills each request's `out` (empty: no lane or the decode failed).
     */
    void draft(std::span<draft_request> reqs);

    /** The lanes the context was created with. */
    int32_t lanes() const;

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/**
 * "" when the two vocabularies are interchangeable token by token, otherwise a sentence naming
 * the first difference (type, size, BOS/EOS, or the first token id whose text differs).
 */
std::string vocab_difference(const llama_model *target, const llama_model *draft);

}  // namespace sf
