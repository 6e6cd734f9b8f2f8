// Speculative decoding for llama_engine (issue #21): the options (--spec-type, --spec-draft-max)
// and the n-gram prompt-lookup drafter. A draft is a guess of the tokens that follow a
// sequence's tokens; the scheduler puts it into the sequence's batch item behind the token to
// decode, and verification samples each position with the sequence's own counter-based
// sampler (gumbel_sampler.h), keeping the drafts the target samples itself and the first
// token where it differs. The drafter itself never touches the model: n-gram lookup reads the
// sequence's own prompt and generated tokens, so it adds no decode pass to a tick; a draft
// model (draft_model.h) decodes its guesses before the tick's decode.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/token.h"

namespace sf {

/** Where drafts come from. */
enum class spec_type : uint8_t {
    NONE,   // no speculation (the default)
    NGRAM,  // n-gram prompt lookup in the sequence's own tokens
    DRAFT,  // a draft model with the same tokenizer (spec_options::draft_model, draft_model.h)
    MTP,    // the model's own multi-token-prediction (NextN) block (mtp_drafter.h)
};

/** Speculation settings of an engine (units: tokens). */
struct spec_options {
    spec_type type    = spec_type::NONE;
    int32_t draft_max = 8;    // most draft tokens per sequence per tick (1..k_spec_draft_limit)
    int32_t ngram_min = 2;    // shortest n-gram (the sequence's last tokens) looked up
    int32_t ngram_max = 4;    // longest n-gram looked up (tried first)
    std::string draft_model;  // DRAFT: the draft model's GGUF file (--model-draft)
};

/**
 * Upper bound of spec_options::draft_max. A verified item has 1 + draft tokens of one
 * sequence; ggml's CPU flash attention switches to its tiled path (other rounding) at 64 query
 * rows per sequence, and a draft must be computed as the token-by-token run would be.
 */
inline constexpr int32_t k_spec_draft_limit = 32;

/** "none", "ngram", "draft" or "mtp" → type. False for any other name. */
bool parse_spec_type(const std::string &name, spec_type &out);
/** The name parse_spec_type accepts for `t`. */
const char *spec_type_name(spec_type t);

/**
 * N-gram prompt lookup: finds the most recent earlier occurrence of the longest suffix of
 * `tokens` of ngram_max down to ngram_min tokens, and writes into `out` (cleared first) up to
 * `n_max` tokens that followed that occurrence. `tokens` is the sequence's prompt and generated
 * tokens, the last one being the token decoded next. `out` stays empty when no suffix recurs.
 * Cost: O(tokens.size() × ngram_max) comparisons at worst.
 */
void ngram_draft(std::span<const token_id> tokens, const spec_options &opts, int32_t n_max,
                 std::vector<token_id> &out);

}  // namespace sf
