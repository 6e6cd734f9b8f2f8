// The output constraint of a request (grammar, lazy triggers, preserved tokens, reasoning
// budget; core/sampling.h) as llama.cpp `common` sampler parameters, for llama_engine::seq_start.
// Stateless; any thread.
#pragma once

#include "core/sampling.h"

struct common_params_sampling;
struct llama_vocab;

namespace sf {

/**
 * Sets `sp`'s grammar, lazy triggers, preserved tokens and reasoning budget from `c`, as
 * llama-server does (tools/server/server-schema.cpp: preserved_tokens, grammar_triggers,
 * reasoning_budget_*); trigger words that are one preserved token become token triggers.
 */
void apply_constraint(const llama_vocab *vocab, const output_constraint &c,
                      common_params_sampling &sp);

}  // namespace sf
