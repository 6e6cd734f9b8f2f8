// Sampling parameters of one sequence and the output constraint (grammar) the worker's chat
// layer adds to them. Plain data: no I/O, no JSON, no gRPC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sf {

/** A lazy grammar's trigger; `type` is llama.cpp's common_grammar_trigger_type. */
struct grammar_trigger_spec {
    int type = 0;
    std::string value;

    bool operator==(const grammar_trigger_spec &) const = default;
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

    bool operator==(const output_constraint &) const = default;
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
    // false: this request's decode steps carry no speculative draft (--spec-type). Output is
    // the same either way; opting out saves the verification rows of drafts it would reject.
    bool speculative = true;
    output_constraint constraint;  // set by the worker from the rendered chat, not by clients

    bool operator==(const sampling_params &) const = default;
};

}  // namespace sf
