// What the pinned llama.cpp's samplers accept, checked before a sequence is admitted: a value
// the API parsers let through but the engine refuses (common_sampler_init throws) or that
// poisons its arithmetic must be a 400 at Submit, not a failed sequence (500) later, and never
// NaN probabilities. Used by the worker (worker_service::Submit) for every API.
#pragma once

#include <string>

#include "core/sampling.h"

namespace sf {

/**
 * Temperatures above 0 and below this are sampled greedily (temperature 0). llama.cpp divides
 * the logits by the temperature unless it is <= 0: 1e-45 (a float's smallest) turns them into
 * ±inf and the softmax into NaN (shared/cases B40). Below 1e-3 the scaled distribution is
 * already one-hot for any logit gap above ~0.1, so greedy changes nothing a client can see.
 */
inline constexpr float k_min_sampling_temperature = 1e-3f;

/**
 * Normalizes `p` (a tiny positive temperature → 0) and checks it against the samplers'
 * requirements (common_sampler_init: repeat penalty finite and > 0 with a finite inverse,
 * presence and frequency penalties finite; temperature, top_p and min_p finite). Returns true
 * when usable; else false with `message` and `param` (the OpenAI-style field name).
 */
bool check_sampling(sampling_params &p, std::string &message, std::string &param);

}  // namespace sf
