// The inference engine seen from the scheduler: tokenizer, chat template, one context that
// serves many sequences (llama.cpp seq_ids) in one batch per tick, and per-sequence samplers.
// engine/llama/ implements it over llama.cpp; tests drive the scheduler with a fake.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/host_buffer.h"

namespace sf {

/** A vocabulary id (llama.cpp's llama_token). */
using token_id = int32_t;

/** One tool call of an assistant message (OpenAI shape: arguments are JSON text). */
struct tool_call {
    std::string id;
    std::string name;
    std::string arguments;
};

/** A chat message after API parsing; `role` is system|user|assistant|tool. */
struct chat_message {
    std::string role;
    std::string content;
    std::string name;
    std::string tool_call_id;
    std::string reasoning_content;
    std::vector<tool_call> tool_calls;
};

/** A tool the model may call (OpenAI function tool / Anthropic tool). */
struct tool_spec {
    std::string name;
    std::string description;
    std::string parameters;  // JSON Schema of the arguments object, as JSON text
};

/** Whether and which tool the model must call. NAMED and REQUIRED are enforced by grammar. */
enum class tool_choice_mode { AUTO, NONE, REQUIRED, NAMED };

/**
 * What shapes a chat turn besides its messages, the same for every API (core chat layer,
 * docs/ARCHITECTURE.md "Chat layer"). The worker turns it, through llama.cpp `common`
 * (common_chat_templates_apply), into the prompt, a grammar and a parser description.
 */
struct chat_options {
    std::vector<tool_spec> tools;
    tool_choice_mode tool_choice = tool_choice_mode::AUTO;
    std::string tool_name;            // NAMED: the tool that must be called (one of `tools`)
    bool parallel_tool_calls = true;  // more than one call in one answer
    std::string json_schema;          // non-empty: the content is JSON valid against it (JSON text)
    int reasoning = -1;               // -1: the template's default, 0: off, 1: on
    std::string reasoning_effort;     // non-empty: template kwarg `reasoning_effort`
    int32_t reasoning_budget = -1;  // reasoning tokens before the end tag is forced; -1: unlimited
    std::vector<std::pair<std::string, std::string>> template_kwargs;  // name -> JSON text
};

/** A lazy grammar's trigger; `type` is llama.cpp's common_grammar_trigger_type. */
struct grammar_trigger_spec {
    int type = 0;
    std::string value;
};

/**
 * The output constraint of one sequence, produced by the chat layer and applied in the
 * sequence's sampler (llama.cpp grammar sampler + reasoning budget). Empty grammar: none.
 */
struct output_constraint {
    std::string grammar;  // GBNF
    bool lazy = false;    // active only after a trigger (tool_choice auto)
    std::vector<grammar_trigger_spec> triggers;
    std::vector<std::string> preserved_tokens;  // special tokens the grammar names
    std::string generation_prompt;              // prompt tail the grammar starts with (prefilled)
    std::string thinking_start;                 // e.g. "<think>"; empty: no reasoning tags
    std::vector<std::string> thinking_end;      // e.g. "</think>"
    int32_t reasoning_budget = -1;              // see chat_options
};

/** How the head parses one turn's generated text (inputs of llama.cpp common_chat_parse). */
struct chat_parse_spec {
    int32_t format = 0;             // common_chat_format; 0: content only
    std::string parser;             // serialized PEG parser (common_peg_arena); may be empty
    std::string generation_prompt;  // the prompt's tail (e.g. "<think>\n\n</think>\n\n")
    bool thinking         = false;  // the turn may start with reasoning
    bool parse_tool_calls = false;  // tools were offered and may be called
};

/**
 * Sampling parameters of one sequence. Defaults follow llama-server's (common.h,
 * common_params_sampling). temperature <= 0 is greedy.
 */
struct sampling_params {
    float temperature       = 0.8f;
    int32_t top_k           = 40;
    float top_p             = 0.95f;
    float min_p             = 0.05f;
    float repeat_penalty    = 1.0f;
    int32_t repeat_last_n   = 64;
    float presence_penalty  = 0.0f;
    float frequency_penalty = 0.0f;
    uint64_t seed           = 0;
    int32_t max_tokens      = 256;  // generated tokens, >= 1
    std::vector<std::string> stop;
    bool ignore_eos = false;
    output_constraint constraint;  // set by the worker from the rendered chat, not by clients
};

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
};

/**
 * Abstract engine. Tokenizer and template calls are const and thread-safe; sequence, decode
 * and sample calls belong to the scheduler's tick thread only. Failures are return values.
 */
class engine_i {
  public:
    virtual ~engine_i() = default;

    /** Per-sequence context limit in tokens (prompt + generated). */
    virtual int32_t n_ctx_seq() const = 0;
    /** Maximum number of concurrent sequences (seq ids 0..n_seq_max-1). */
    virtual int32_t n_seq_max() const = 0;
    /** Maximum tokens in one decode call (the tick's token budget). */
    virtual int32_t n_batch() const = 0;

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
    /** Runs one batch over all items. Returns 0 on success, llama_decode's code otherwise. */
    virtual int decode(const std::vector<batch_item> &items) = 0;
    /** Samples (and records) token number `index` of `seq` from items[item] of the last decode. */
    virtual token_id sample(int seq, int item, uint32_t index) = 0;
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
     * recomputation). Returns false (and drops the parked state) when the engine refuses it.
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
     * Extra sequence ids the prefix cache may keep memory under, after the live ones:
     * n_seq_max() .. n_seq_max() + n_cache_seqs() - 1. 0 when partial_prefixes() is false,
     * or when each sequence has its own KV stream (then cached prefixes are host copies).
     */
    virtual int32_t n_cache_seqs() const { return 0; }
    /**
     * Gives empty sequence `dst` the memory of positions [0, n) of `src`: tagged for both
     * (shared, not copied) in one KV pool, a state copy between per-sequence KV streams.
     * False when the engine could not (then `dst` is left empty).
     */
    virtual bool seq_share(int /*src*/, int /*dst*/, int32_t /*n*/) { return false; }
    /** Forgets positions >= n of `seq` (its sampler stays). False when the memory refuses. */
    virtual bool seq_trim(int /*seq*/, int32_t n) { return n == 0; }
    /** Bytes of `seq`'s saved state (llama_state_seq_get_size): what seq_save would write. */
    virtual size_t seq_state_size(int /*seq*/) { return 0; }
    /**
     * Saves `seq`'s memory (llama_state_seq_get_data) into `out`, reusing its memory when
     * large enough. False when it cannot.
     */
    virtual bool seq_save(int /*seq*/, host_buffer & /*out*/) { return false; }
    /** Loads a state saved by seq_save into empty sequence `seq`. False when refused. */
    virtual bool seq_load(int /*seq*/, std::span<const uint8_t> /*data*/) { return false; }
    /**
     * Token offsets in `prompt` (rendered from `messages` by render_chat) where a message of
     * the conversation ends: where a state snapshot is worth taking, because another
     * conversation sharing the messages so far shares these tokens. Sorted, each in
     * (0, tokens.size()). Empty when the engine has no use for them.
     */
    virtual std::vector<int32_t> message_boundaries(const std::vector<chat_message> & /*messages*/,
                                                    const rendered_prompt & /*prompt*/) const {
        return {};
    }
};

}  // namespace sf
