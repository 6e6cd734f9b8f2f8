// The inference engine seen from the scheduler: tokenizer, chat template, one context that
// serves many sequences (llama.cpp seq_ids) in one batch per tick, and per-sequence samplers.
// engine/llama/ implements it over llama.cpp; tests drive the scheduler with a fake.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/chat.h"
#include "core/sampling.h"
#include "core/token.h"
#include "util/host_buffer.h"

namespace sf {

/** engine_i::decode's result when set_interrupt's flag stopped the batch (llama_decode's 2). */
inline constexpr int k_decode_interrupted = 2;

/** A chat rendered by the model's template and tokenized. */
struct rendered_prompt {
    std::string text;  // the rendered template output (what `tokens` tokenize)
    std::vector<token_id> tokens;
    std::vector<std::string> extra_stops;  // stop strings the template asks for
    output_constraint constraint;          // grammar etc. for the sampler
    chat_parse_spec parse;                 // how to read the answer back
};

/** One sequence's share of a tick: `tokens` at positions pos, pos+1, … of sequence `seq`. */
struct batch_item {
    int seq = 0;
    std::vector<token_id> tokens;
    int32_t pos      = 0;
    bool want_logits = false;  // logits of the last token are needed (to sample)
    // With want_logits: the last n_logits tokens get logits. More than 1 for a sequence whose
    // item carries a speculative draft behind its token (tokens = [last, d1..dk], n_logits = k+1).
    int32_t n_logits = 1;
};

/** One sequence's share of engine_i::sample_many: what sample() takes, and its token. */
struct sample_request {
    int seq        = 0;
    int item       = 0;
    uint32_t index = 0;
    token_id out   = -1;
};

/** One sequence's share of engine_i::draft_many (units: tokens). */
struct draft_request {
    int seq = 0;                       // the sequence id
    std::span<const token_id> tokens;  // its prompt and generated tokens; the last is decoded next
    int32_t n_max = 0;                 // most draft tokens wanted
    std::vector<token_id> out;         // filled: the draft (empty: none)
};

/**
 * Abstract engine. Tokenizer and template calls are const and thread-safe; sequence, decode
 * and sample calls belong to the scheduler's tick thread only. Failures are return values.
 */
/**
 * A sequence's sampler built ahead of seq_start (engine_i::prepare_sampler), off the tick
 * thread; engine-specific, opaque to the scheduler. Used once.
 */
struct prepared_sampler {
    virtual ~prepared_sampler() = default;
};

class engine_i {
  public:
    virtual ~engine_i() = default;

    /** Per-sequence context limit in tokens (prompt + generated). */
    virtual int32_t n_ctx_seq() const = 0;
    /** Maximum number of concurrent sequences (seq ids 0..n_seq_max-1). */
    virtual int32_t n_seq_max() const = 0;
    /**
     * KV cells in use in a pool shared by all sequences (a cell several sequences share counts
     * once; the held prefixes of finished sequences count), and the pool's size. -1 when each
     * sequence has its own memory reserved whole (n_ctx_seq() cells each): nothing to share.
     * Tick thread.
     */
    virtual int64_t kv_cells_used() const { return -1; }
    virtual int64_t kv_cells_total() const { return -1; }
    /** Maximum tokens in one decode call (the tick's token budget). */
    virtual int32_t n_batch() const = 0;
    /** Tokens in the vocabulary: valid token ids are 0..n_vocab()-1. */
    virtual int32_t n_vocab() const = 0;

    /** Tokenizes text; special tokens in the text are parsed (templates emit them). */
    virtual std::vector<token_id> tokenize(std::string_view text, bool add_bos) const = 0;
    /** The raw bytes of one token (may be part of a UTF-8 code point). */
    virtual std::string token_piece(token_id t) const = 0;
    /** True for end-of-generation tokens (EOS, <|im_end|>, …). */
    virtual bool is_eog(token_id t) const = 0;
    /**
     * Renders messages with the model's chat template (llama.cpp common chat API) and
     * tokenizes the result. Returns false and sets `error` when the template rejects them.
     */
    virtual bool render_chat(const std::vector<chat_message> &messages, bool add_generation_prompt,
                             const chat_options &options, rendered_prompt &out,
                             std::string &error) const = 0;
    /** render_chat without tools, schema or reasoning options. */
    bool render_chat(const std::vector<chat_message> &messages, bool add_generation_prompt,
                     rendered_prompt &out, std::string &error) const {
        return render_chat(messages, add_generation_prompt, chat_options{}, out, error);
    }

    /**
     * Prepares sequence `seq` to generate: a fresh sampler that has seen `history`. Sampling
     * is counter-based (engine/llama/gumbel_sampler.h): token i's draw depends only on
     * (seed, i) and the logits, so a session resumed with its tokens so far in `history`
     * continues as the uninterrupted run would have. The last `n_generated` tokens of
     * `history` were generated by this session (a resume): they also advance the grammar
     * of params.constraint, so the resumed sampler is in the state it had. Returns false
     * when the constraint cannot be built or the generated tokens do not fit it.
     */
    virtual bool seq_start(int seq, const sampling_params &params,
                           std::span<const token_id> history, size_t n_generated = 0) = 0;
    /**
     * Builds what seq_start would build for `params` (the grammar parsed and compiled: tens of
     * ms for a large schema), on the calling thread: any thread, concurrently with decoding.
     * nullptr when this engine builds nothing ahead, or when it fails (seq_start then tries
     * and reports). Issue #38 item 4: the worker calls it on the request's thread.
     */
    virtual std::shared_ptr<prepared_sampler> prepare_sampler(const sampling_params &) const {
        return nullptr;
    }
    /**
     * Tick thread, before seq_start(seq, …) with the same params: that seq_start takes
     * `ready` (from prepare_sampler) instead of building its sampler. Ignored by engines
     * that prepare nothing.
     */
    virtual void seq_use_prepared(int /*seq*/, std::shared_ptr<prepared_sampler> /*ready*/) {}
    /**
     * Runs one batch over all items. Returns 0 on success, k_decode_interrupted when the flag
     * given to set_interrupt became true mid-batch (no sequence changed: the batch's cells are
     * removed again), llama_decode's code otherwise. After a failure every sequence's memory
     * is as before the call (where the memory can be cut back: attention KV), so the batch,
     * or part of it, can be decoded again.
     */
    virtual int decode(const std::vector<batch_item> &items) = 0;
    /**
     * A flag that interrupts the decode in flight when it becomes true (read by the decode, set
     * by any thread; owned by the caller, which outlives the engine's use of it; null: none).
     * Only engines whose memory can drop a batch again (attention KV: partial_prefixes()) honour
     * it; the others ignore it and finish every batch.
     */
    virtual void set_interrupt(const std::atomic<bool> * /*flag*/) {}
    /** Samples (and records) token number `index` of `seq` from items[item] of the last decode. */
    virtual token_id sample(int seq, int item, uint32_t index) = 0;
    /**
     * Samples every request as sample() would, filling .out: the same tokens, whatever the
     * order or threads the engine uses. Tick thread. The default calls sample() for each.
     */
    virtual void sample_many(std::span<sample_request> reqs) {
        for (auto &r : reqs) r.out = sample(r.seq, r.item, r.index);
    }
    /**
     * Whether `seq`'s samples are slow enough to take off the tick thread (an output grammar
     * checked over the vocabulary: tens of ms per token for a deep schema, issue #38 item 4).
     * Tick thread. The default: never.
     */
    virtual bool sample_deferrable(int /*seq*/) const { return false; }
    /**
     * Starts sampling token `index` of `seq` from items[item] of the last decode on another
     * thread (the logits are copied now); the token comes back from take_deferred, as
     * sample() would have drawn it. Tick thread; only where sample_deferrable(seq). Until
     * then the sequence is not decoded; seq_end, seq_park and seq_start of it drop the sample.
     */
    virtual void sample_deferred(int /*seq*/, int /*item*/, uint32_t /*index*/) {}
    /**
     * Appends the deferred samples finished since the last call, as (seq, token); a token of
     * LLAMA_TOKEN_NULL (-1) means the sampler failed (the sequence should end in an error).
     * Tick thread.
     */
    virtual void take_deferred(std::vector<std::pair<int, token_id>> & /*out*/) {}
    /**
     * What to call (from the sampling thread, no engine lock held) when a deferred sample has
     * finished: the tick loop's wake-up. Null: nothing. Returns after any running call ended.
     */
    virtual void on_deferred_ready(std::function<void()> /*wake*/) {}
    /**
     * Speculative decoding: the most draft tokens the engine verifies per sequence and tick
     * (0: speculation off, then draft and sample_at are never called).
     */
    virtual int32_t spec_draft_max() const { return 0; }
    /**
     * Proposes up to n_max tokens to follow `tokens` (sequence `seq`'s prompt and generated
     * tokens; the last is the token decoded next) into `out`, cleared first; empty: no draft.
     * Tick thread; n-gram drafts add no decode pass, a draft model's add its own (draft_many).
     */
    virtual void draft(int /*seq*/, std::span<const token_id> /*tokens*/, int32_t /*n_max*/,
                       std::vector<token_id> &out) {
        out.clear();
    }
    /**
     * Drafts for all of a tick's drafting sequences at once (a draft model decodes them in one
     * batch per draft position). Tick thread. The default calls draft() for each.
     */
    virtual void draft_many(std::span<draft_request> reqs) {
        for (auto &r : reqs) draft(r.seq, r.tokens, r.n_max, r.out);
    }
    /**
     * Samples (and records) token number `index` of `seq` from the logits of row `offset` of
     * items[item] of the last decode (0: the first of its n_logits rows). Verification calls it
     * for offsets 0, 1, … in order while the sampled token equals the draft token there, so the
     * sampler (penalties, grammar) advances token by token exactly as without a draft.
     */
    virtual token_id sample_at(int seq, int item, int32_t /*offset*/, uint32_t index) {
        return sample(seq, item, index);
    }
    /** Frees the sequence's KV cells and sampler. */
    virtual void seq_end(int seq) = 0;
    /**
     * Runs a request's engine steps once with throwaway inputs (decode, sample, state save and
     * load), on the thread that will run them for requests (the tick thread), before the first
     * request: the first pass through each faults in code and memory. No-op by default.
     */
    virtual void warm_up() {}

    /**
     * Preemption: saves sequence `seq` (its KV state, llama_state_seq_get_data, to host memory,
     * and its sampler), frees its cells, and returns a handle. Returns -1 when it cannot.
     */
    virtual int64_t seq_park(int seq) = 0;
    /**
     * Restores a parked sequence into free sequence id `seq`, exactly where it stopped (no
     * recomputation). Returns false when the engine refuses it: the state stays parked under
     * `handle` (a shared KV pool may have no run of free cells that long yet; retry later or
     * seq_drop_parked).
     */
    virtual bool seq_unpark(int64_t handle, int seq) = 0;
    /** Forgets a parked sequence (its session ended while it waited). */
    virtual void seq_drop_parked(int64_t handle) = 0;
    /** Bytes of host memory held by parked sequences. */
    virtual size_t parked_bytes() const = 0;

    // Prefix cache support (src/cache). Defaults describe an engine without one.

    /**
     * True when any prefix of a sequence's memory can be shared with another sequence or cut
     * off (attention-only KV cache). False for recurrent and hybrid models: their state is
     * reusable only whole, at the position it was saved (ENGINE-NOTES.md).
     */
    virtual bool partial_prefixes() const { return false; }
    /**
     * Gives empty sequence `dst` a copy of the memory of positions [0, n) of live sequence
     * `src` (each sequence has its own memory: cells are never shared between sequences).
     * False when the engine could not (then `dst` is left empty).
     */
    virtual bool seq_share(int /*src*/, int /*dst*/, int32_t /*n*/) { return false; }
    /** Forgets positions >= n of `seq` (its sampler stays). False when the memory refuses. */
    virtual bool seq_trim(int /*seq*/, int32_t n) { return n == 0; }
    /**
     * Saves `seq`'s memory (llama_state_seq_get_data) into `out`, reusing its memory when
     * large enough. False when it cannot.
     */
    virtual bool seq_save(int /*seq*/, host_buffer & /*out*/) { return false; }
    /** Loads a state saved by seq_save into empty sequence `seq`. False when refused. */
    virtual bool seq_load(int /*seq*/, std::span<const uint8_t> /*data*/) { return false; }
    /**
     * Token offsets in `prompt` (rendered from `messages` and `options` by render_chat) where a
     * message of the conversation ends: where a state snapshot is worth taking, because another
     * conversation sharing the messages so far shares these tokens. Sorted, each in
     * (0, tokens.size()). Empty when the engine has no use for them.
     */
    virtual std::vector<int32_t> message_boundaries(const std::vector<chat_message> & /*messages*/,
                                                    const chat_options & /*options*/,
                                                    const rendered_prompt & /*prompt*/) const {
        return {};
    }
};

}  // namespace sf
