// llama_engine's samplers (llama_engine.h): building a sequence's chain (here or, for a
// grammar, ahead on the request's thread), sampling after a decode (one sequence, many on the
// threadpool, a grammar's off the tick thread) and the verification samples of speculation.
// Tick thread, except prepare_sampler (any thread).
#include <llama.h>
#include <sampling.h>

#include <stdexcept>
#include <utility>

#include "engine/llama/gumbel_sampler.h"
#include "engine/llama/llama_engine_impl.h"
#include "engine/llama/sampler_build.h"
#include "util/log.h"

namespace sf {

std::shared_ptr<prepared_sampler> llama_engine::prepare_sampler(const sampling_params &p) const {
    return prepare_chain(impl_->model, impl_->vocab, impl_->utf8_table, p);
}

void llama_engine::seq_use_prepared(int seq, std::shared_ptr<prepared_sampler> ready) {
    impl_->prepared.at(seq) = std::move(ready);
}

bool llama_engine::seq_start(int seq, const sampling_params &p, std::span<const token_id> history,
                             size_t n_generated) {
    impl_->free_sampler(seq);
    // Built on the request's thread (prepare_sampler), else here.
    built_sampler b = take_prepared(std::move(impl_->prepared.at(seq)));
    impl_->prepared.at(seq).reset();
    std::string error;
    if (!b.sampler) b = build_sampler(impl_->model, impl_->vocab, impl_->utf8_table, p, error);
    if (!b.sampler || !start_chain(b, p, history, n_generated, error)) {
        SF_LOG_ERROR("engine", "sequence %d: cannot build its sampler: %s", seq, error.c_str());
        return false;
    }
    impl_->plain.at(seq)    = b.plain;
    impl_->samplers.at(seq) = b.sampler;
    impl_->grammars.at(seq) = b.grammar;
    return true;
}

token_id llama_engine::sample(int seq, int item, uint32_t index) {
    auto *s     = impl_->samplers.at(seq);
    int32_t idx = impl_->item_logits_index.at(item);
    if (impl_->grammars.at(seq)) return impl_->sample_grammar(seq, idx, index);
    gumbel_sampler_set_index(common_sampler_get(s), index);
    token_id t = common_sampler_sample(s, impl_->ctx, idx);
    common_sampler_accept(s, t, /*is_generated=*/true);
    return t;
}

void llama_engine::sample_many(std::span<sample_request> reqs) {
    constexpr size_t k_min_parallel = 4;  // below, the graph's kickoff costs more than it saves
    std::vector<plain_sample> plain;
    std::vector<size_t> from;  // plain[k] samples reqs[from[k]]
    if (impl_->sampling && reqs.size() >= k_min_parallel) {
        llama_synchronize(impl_->ctx);
        for (size_t i = 0; i < reqs.size(); ++i) {
            const auto &r = reqs[i];
            if (!impl_->plain.at(r.seq)) continue;
            const float *row =
                llama_get_logits_ith(impl_->ctx, impl_->item_logits_index.at(r.item));
            if (!row) continue;
            plain.push_back({impl_->samplers.at(r.seq), row, r.index});
            from.push_back(i);
        }
    }
    if (plain.size() < k_min_parallel) return engine_i::sample_many(reqs);
    impl_->sampling->run(plain);
    parallel_samples_ += plain.size();
    for (auto &r : reqs) r.out = LLAMA_TOKEN_NULL;
    for (size_t k = 0; k < plain.size(); ++k) reqs[from[k]].out = plain[k].out;
    for (auto &r : reqs)  // a grammar or a reasoning budget: common_sampler_sample, here
        if (r.out == LLAMA_TOKEN_NULL) r.out = sample(r.seq, r.item, r.index);
}

bool llama_engine::sample_deferrable(int seq) const {
    return impl_->grammars.at(seq) != nullptr;
}

void llama_engine::sample_deferred(int seq, int item, uint32_t index) {
    llama_synchronize(impl_->ctx);
    impl_->deferred->submit(seq, impl_->samplers.at(seq), impl_->grammars.at(seq),
                            llama_get_logits_ith(impl_->ctx, impl_->item_logits_index.at(item)),
                            index);
}

void llama_engine::take_deferred(std::vector<std::pair<int, token_id>> &out) {
    impl_->deferred->take(out);
}

void llama_engine::on_deferred_ready(std::function<void()> wake) {
    impl_->deferred->on_ready(std::move(wake));
}

token_id llama_engine::sample_at(int seq, int item, int32_t offset, uint32_t index) {
    auto *s = impl_->samplers.at(seq);
    gumbel_sampler_set_index(common_sampler_get(s), index);
    const int32_t n_l = impl_->item_n_logits.at(item);
    if (offset < 0 || offset >= n_l)
        throw std::out_of_range("sample_at: no logits at that row of the item");
    const int32_t idx = impl_->item_logits_index.at(item) - (n_l - 1) + offset;
    if (impl_->grammars.at(seq)) return impl_->sample_grammar(seq, idx, index);
    token_id t = common_sampler_sample(s, impl_->ctx, idx);
    common_sampler_accept(s, t, /*is_generated=*/true);
    return t;
}

}  // namespace sf
