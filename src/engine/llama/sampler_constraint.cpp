#include "engine/llama/sampler_constraint.h"

#include <common.h>

namespace sf {

void apply_constraint(const llama_vocab *vocab, const output_constraint &c,
                      common_params_sampling &sp) {
    auto tok = [vocab](const std::string &s) { return common_tokenize(vocab, s, false, true); };
    // Fed to the grammar (non-lazy) and the reasoning budget: where the prompt left them.
    sp.generation_prompt = c.generation_prompt;
    if (!c.grammar.empty()) {
        sp.grammar      = {COMMON_GRAMMAR_TYPE_TOOL_CALLS, c.grammar};
        sp.grammar_lazy = c.lazy;
        for (const auto &t : c.preserved_tokens) {
            auto ids = tok(t);
            if (ids.size() == 1) sp.preserved_tokens.insert(ids[0]);
        }
        for (const auto &t : c.triggers) {
            common_grammar_trigger tr{static_cast<common_grammar_trigger_type>(t.type), t.value,
                                      LLAMA_TOKEN_NULL};
            if (tr.type == COMMON_GRAMMAR_TRIGGER_TYPE_WORD) {
                auto ids = tok(t.value);
                if (ids.size() == 1 && sp.preserved_tokens.count(ids[0])) {
                    tr.type  = COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN;
                    tr.token = ids[0];
                }
            }
            sp.grammar_triggers.push_back(std::move(tr));
        }
    }
    if (!c.thinking_start.empty() && !c.thinking_end.empty()) {
        sp.reasoning_budget_start = tok(c.thinking_start);
        for (const auto &e : c.thinking_end) sp.reasoning_budget_end.push_back(tok(e));
        sp.reasoning_budget_tokens = c.reasoning_budget;
        sp.reasoning_budget_forced = sp.reasoning_budget_end.front();
    }
}

}  // namespace sf
