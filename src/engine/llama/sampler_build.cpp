#include "engine/llama/sampler_build.h"

#include <common.h>
#include <llama.h>
#include <sampling.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "engine/llama/gumbel_sampler.h"
#include "engine/llama/parallel_sampling.h"
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
    ~llama_prepared() override { free_built(b); }
};

// Whether the request's grammar can be kept apart from common_sampler: an output grammar that
// is not lazy and has no reasoning budget beside it (common_sampler_init then makes no budget
// sampler: sampling.cpp) and is not llguidance's.
bool grammar_apart(const common_params_sampling &sp) {
    const std::string &g = common_grammar_value(sp.grammar);
    if (g.empty() || sp.grammar_lazy || g.rfind("%llguidance", 0) == 0) return false;
    const bool budget = !sp.reasoning_budget_start.empty() && !sp.reasoning_budget_end.empty() &&
                        (sp.reasoning_budget_tokens >= 0 || sp.reasoning_control);
    return !budget;
}

// The grammar sampler common_sampler_init would have made for `sp` (not lazy): parsed from the
// grammar, then fed the generation prompt's tokens the template already placed (an output or
// tool-call grammar starts after them), skipping a leading space token as sampling.cpp does.
llama_sampler *build_grammar(const llama_vocab *vocab, const common_params_sampling &sp) {
    llama_sampler *g =
        llama_sampler_init_grammar(vocab, common_grammar_value(sp.grammar).c_str(), "root");
    if (!g) throw std::runtime_error("failed to parse grammar");
    if (sp.generation_prompt.empty() || !common_grammar_needs_prefill(sp.grammar)) return g;
    const auto tokens = common_tokenize(vocab, sp.generation_prompt, false, true);
    try {
        for (size_t i = 0; i < tokens.size(); ++i) {
            const std::string piece = common_token_to_piece(vocab, tokens[i], true);
            if (i == 0 && !piece.empty() && std::isspace(static_cast<unsigned char>(piece[0])) &&
                !std::isspace(static_cast<unsigned char>(sp.generation_prompt[0])))
                continue;
            llama_sampler_accept(g, tokens[i]);
        }
    } catch (...) {
        llama_sampler_free(g);
        throw;
    }
    return g;
}

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
        if (grammar_apart(sp)) {
            out.grammar = build_grammar(vocab, sp);
            sp.grammar  = {};
        }
        out.sampler = common_sampler_init(model, sp);
        // Well-formed UTF-8 only (utf8_guard_sampler.h).
        if (out.sampler) utf8_guard_install(common_sampler_get(out.sampler), utf8);
    } catch (const std::exception &e) {
        free_built(out);
        error = e.what();
    }
    if (!out.sampler) {
        free_built(out);
        if (error.empty()) error = "the sampler could not be built";
    }
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

void free_built(built_sampler &b) {
    if (b.sampler) common_sampler_free(b.sampler);
    if (b.grammar) llama_sampler_free(b.grammar);
    b = built_sampler{};
}

built_sampler take_prepared(std::shared_ptr<prepared_sampler> ready) {
    built_sampler b;
    if (auto *mine = dynamic_cast<llama_prepared *>(ready.get())) std::swap(b, mine->b);
    return b;
}

bool start_chain(built_sampler &b, const sampling_params &p, std::span<const token_id> history,
                 size_t n_generated, std::string &error) {
    common_sampler *chain = b.sampler;
    n_generated           = std::min(n_generated, history.size());
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
        if (b.grammar)  // a grammar apart advances over the generated tokens, as in common_sampler
            for (size_t i = n_prompt; i < history.size(); ++i)
                llama_sampler_accept(b.grammar, history[i]);
    } catch (const std::exception &e) {
        free_built(b);
        error = e.what();
        return false;
    }
    // Counter-based sampling in place of `dist` (gumbel_sampler.h): resumable and stable.
    gumbel_sampler_install(common_sampler_get(chain), p.seed);
    return true;
}

llama_token sample_with_grammar(common_sampler *chain, llama_sampler *grammar, const float *logits,
                                int32_t n_vocab, uint32_t index,
                                std::vector<llama_token_data> &scratch) {
    llama_sampler *c = common_sampler_get(chain);
    gumbel_sampler_set_index(c, index);
    llama_token_data_array cur = candidates_from(logits, n_vocab, scratch);
    llama_sampler_apply(c, &cur);
    llama_token id = cur.data[cur.selected].id;
    // Rejection first (one token through the grammar), the whole vocabulary only when needed.
    llama_token_data one{id, 1.0f, 0.0f};
    llama_token_data_array single{&one, 1, -1, false};
    llama_sampler_apply(grammar, &single);
    if (single.data[0].logit == -INFINITY) {
        cur = candidates_from(logits, n_vocab, scratch);
        llama_sampler_apply(grammar, &cur);
        llama_sampler_apply(c, &cur);
        id = cur.data[cur.selected].id;
    }
    llama_sampler_accept(grammar, id);
    common_sampler_accept(chain, id, /*is_generated=*/true);
    return id;
}

}  // namespace sf
