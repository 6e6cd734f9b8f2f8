// Plans one tick: which sequences get how many tokens in the next llama_decode.
// Pure function of the sequences' state (no threads, no engine), so tests drive it directly.
//
// Order (issues #4, #18): decode steps of generating sequences by class, then prefill chunks
// by class. Within a class, the sequence with the least attained service goes first (its
// client's service, then its own: scheduler/service_policy.h), then the one served least
// recently, so a newcomer's short prompt is prefilled in the next tick among long ones. The
// class's longest-waiting prefill takes `min_share` of the prompt budget first, so a stream of
// newcomers never starves a long prompt. While an interactive sequence prefills, the tick
// carries no prefill of lower classes: the interactive prompt's tick stays as short as its own
// tokens make it (its first token is not held up by batch prompts). While one generates, lower
// classes' prompt tokens in its ticks are capped (`interactive_tick_prefill`, what fits the
// tick-time target): on a slow model a 128-token chunk took a second per tick, so the chat's
// first visible token (two decode steps after its prompt) and every later one waited for it.
//
// Prefill chunks are cut at multiples of `quantum` tokens (the last piece of a prompt
// excepted): ggml's CPU flash attention runs its tiled GEMM path only for at least 64 query
// rows per sequence and pads to 64 (GGML_FA_TILE_Q, ggml-cpu/common.h, ops.cpp); a 56-token
// chunk took the per-row path and cost about as much as 128.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/service_policy.h"
#include "scheduler/types.h"

namespace sf {

/** What the planner needs to know about one running sequence. */
struct plan_input {
    int slot             = 0;  // caller's handle (returned in plan_entry)
    priority_class cls   = priority_class::NORMAL;
    int32_t pending      = 0;      // tokens waiting to be decoded (prompt rest, or 1 sampled token)
    bool generating      = false;  // prefill finished: `pending` is the last sampled token
    uint64_t last_served = 0;      // tick number when it last got tokens (0 = never)
    uint64_t arrival     = 0;      // admission order, breaks ties
    service_rank served;           // attained service: less goes first within a class
};

struct plan_entry {
    int slot         = 0;
    int32_t n_tokens = 0;  // how many of its pending tokens go into this tick
};

struct planner_options {
    int32_t budget         = 512;  // tokens per tick, decode steps included (the decode's n_batch)
    int32_t prefill_chunk  = 512;  // most prompt tokens one sequence gets in one tick
    int32_t prefill_budget = 0;    // most prompt tokens in one tick, all sequences; 0: budget
    int32_t quantum        = 64;   // prefill chunks are multiples of this (the prompt's end aside)
    double min_share       = 0;    // service_options::min_share; 0: no reserved share
    // Most prompt tokens of lower classes in a tick that carries an interactive sequence's
    // decode step (0: none, a multiple of quantum otherwise); -1: no cap beyond prefill_budget.
    int32_t interactive_tick_prefill = -1;
};

/** Returns the tick's entries in planning order; total n_tokens <= budget. */
std::vector<plan_entry> plan_tick(const std::vector<plan_input> &seqs, const planner_options &opts);

}  // namespace sf
