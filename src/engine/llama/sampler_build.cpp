#include "engine/llama/sampler_build.h"

#include <common.h>
#include <llama.h>
#include <sampling.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "engine/llama/gumbel_sampler.h"
#include "engine/llama/sampler_constraint.h"
#include "engine/llama/utf8_guard_sampler.h"

namespace sf {

namespace {

// Prompt tokens a new sampler sees at least (start_chain): more than the previous-token ring
// (common_params_sampling::n_prev, 64) and any generation prompt.
constexpr size_t k_prompt_tail = 256;

// A chain built by prepare_chain, waiting for its sequence's seq_start.
struct llama_prepared final : prepared_sampler {
    built_sampler b;
    ~llama_prepared() override {
        if (b.sampler) common_sampler_free(b.sampler);
    }
};

}  // namespace

built_sampler build_sampler(const llama_model *model, const llama_vocab *vocab,
                            const std::shared_ptr<const utf8_token_table> &utf8,
                            const sampling_params &p, std::string &error) {
    common_params_sampling sp;
    sp.seed            = static_cast<uint32_t>(p.seed == LLAMA_DEFAULT_SEED ? p.seed ^ 1 : p.seed);
    sp.temp            = p.temperature;
    sp.top_k           = p.top_k;
    sp.top_p           = p.top_p;
    sp.min_p           = p.min_p;
    sp.penalty_repeat  = p.repeat_penalty;
    sp.penalty_last_n  = p.repeat_last_n;
    sp.penalty_present = p.presence_penalty;
    sp.penalty_freq    = p.frequency_penalty;
    sp.no_perf         = true;
    if (p.ignore_eos) {
        sp.ignore_eos         = true;
        const int32_t n_vocab = llama_vocab_n_tokens(vocab);
        for (int32_t t = 0; t < n_vocab; ++t) {
            if (llama_vocab_is_eog(vocab, t)) sp.logit_bias.push_back({t, -INFINITY});
        }
    }
    apply_constraint(vocab, p.constraint, sp);
    built_sampler out;
    // No grammar and no reasoning-budget sampler (common_sampler_init creates one only with a
    // budget or a lazy grammar): the chain is all there is (parallel_sampling.h).
    out.plain = p.constraint.grammar.empty() && sp.reasoning_budget_tokens < 0;
    try {
        out.sampler = common_sampler_init(model, sp);
        // Well-formed UTF-8 only (utf8_guard_sampler.h).
        if (out.sampler) utf8_guard_install(common_sampler_get(out.sampler), utf8);
    } catch (const std::exception &e) {
        if (out.sampler) common_sampler_free(out.sampler);
        out.sampler = nullptr;
        error       = e.what();
    }
    if (!out.sampler && error.empty()) error = "the sampler could not be built";
    return out;
}

std::shared_ptr<prepared_sampler> prepare_chain(const llama_model *model, const llama_vocab *vocab,
                                                const std::shared_ptr<const utf8_token_table> &utf8,
                                                const sampling_params &p) {
    // Only a grammar makes the build worth moving off the tick thread.
    if (p.constraint.grammar.empty()) return nullptr;
    auto out = std::make_shared<llama_prepared>();
    std::string error;
    out->b = build_sampler(model, vocab, utf8, p, error);
    return out->b.sampler ? out : nullptr;
}

built_sampler take_prepared(std::shared_ptr<prepared_sampler> ready) {
    built_sampler b;
    if (auto *mine = dynamic_cast<llama_prepared *>(ready.get())) std::swap(b, mine->b);
    return b;
}

bool start_chain(common_sampler *chain, const sampling_params &p, std::span<const token_id> history,
                 size_t n_generated, std::string &error) {
    n_generated = std::min(n_generated, history.size());
    try {
        // The penalties look at recent tokens, prompt included (as llama-server does); the
        // tokens this session generated before a resume also advance grammar and reasoning
        // budget, so the sampler is in the state the uninterrupted run had.
        // Of the prompt, only the tail can matter to the chain (the penalties' window, the
        // previous-token ring, a generation prompt that opens a reasoning block); the whole of
        // a long prompt cost ~0.2 ms per 1,000 tokens on the path to the first token.
        const size_t n_prompt = history.size() - n_generated;
        const bool all        = p.repeat_last_n < 0 || p.constraint.reasoning_budget >= 0;
        const size_t window =
            all ? n_prompt : std::max<size_t>(k_prompt_tail, static_cast<size_t>(p.repeat_last_n));
        for (size_t i = n_prompt > window ? n_prompt - window : 0; i < history.size(); ++i)
            common_sampler_accept(chain, history[i], i >= n_prompt);
    } catch (const std::exception &e) {
        common_sampler_free(chain);
        error = e.what();
        return false;
    }
    // Counter-based sampling in place of `dist` (gumbel_sampler.h): resumable and stable.
    gumbel_sampler_install(common_sampler_get(chain), p.seed);
    return true;
}

}  // namespace sf
