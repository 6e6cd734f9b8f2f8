// The last stage of each sequence's sampler chain, in place of llama.cpp's `dist`: sampling
// with counter-based randomness. Token i of a session is drawn from softmax(logits) by the
// inverse CDF at u = hash(seed, i) in (0,1): the draw depends only on (seed, i) and the
// logits, not on earlier draws. So a session resumed at index i samples what the
// uninterrupted run did (its tokens are replayed as the same decode steps, so the logits are
// the same), and a tiny logit difference changes the pick only if u falls within that
// difference of a boundary of the cumulative distribution.
// (The stage keeps its first name, sf-gumbel: it began as Gumbel-max, which costs a hash and
// two logarithms per candidate.)
#pragma once

#include <cstdint>

struct llama_sampler;

namespace sf {

/** Creates the sampler (owned by the chain it is added to). Name: "sf-gumbel". */
llama_sampler *gumbel_sampler_init(uint64_t seed);
/** Sets the index of the next token to sample on `chain`'s sf-gumbel stage (no-op if absent). */
void gumbel_sampler_set_index(llama_sampler *chain, uint32_t index);
/** Replaces the `dist` stage of a common_sampler chain by sf-gumbel. */
void gumbel_sampler_install(llama_sampler *chain, uint64_t seed);

}  // namespace sf
