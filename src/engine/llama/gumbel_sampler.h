// The last stage of each sequence's sampler chain, in place of llama.cpp's `dist`: Gumbel-max
// sampling with counter-based noise. Token i of a session is argmax over the candidates of
// (logit + G), G = -log(-log(u)), u = hash(seed, i, token id) in (0,1) — a draw from
// softmax(logits) (the Gumbel-max trick) that depends only on (seed, i) and the logits, not on
// earlier draws. So a session resumed at index i samples what the uninterrupted run did, and
// tiny logit differences (another batch layout after a restart or a prefix-cache hit) almost
// never change the pick: the top two perturbed scores are typically far apart next to float
// noise. Candidates that cannot win are skipped before their noise is computed.
#pragma once

#include <cstdint>

struct llama_sampler;

namespace sf {

/**
 * G for `token` at draw `index` of `seed`: -log(-log(u)), u hashed from the three (float; what
 * the sampler adds to the logit). The sampler picks argmax(logit + G) over the candidates.
 */
float gumbel_noise(uint64_t seed, uint32_t index, int32_t token);

/** Creates the sampler (owned by the chain it is added to). Name: "sf-gumbel". */
llama_sampler *gumbel_sampler_init(uint64_t seed);
/** Sets the index of the next token to sample on `chain`'s sf-gumbel stage (no-op if absent). */
void gumbel_sampler_set_index(llama_sampler *chain, uint32_t index);
/** Replaces the `dist` stage of a common_sampler chain by sf-gumbel. */
void gumbel_sampler_install(llama_sampler *chain, uint64_t seed);

}  // namespace sf
