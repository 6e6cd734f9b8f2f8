#include "engine/llama/parallel_sampling.h"

#include <sampling.h>

#include <stdexcept>

#include "engine/llama/gumbel_sampler.h"

#if defined(__SANITIZE_THREAD__)
#define SF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SF_TSAN 1
#endif
#endif
#ifdef SF_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace sf {

namespace {

// ggml's threadpool hands a graph to its threads and waits for them through C11 atomics in
// ggml-cpu.c (the kick-off, the end-of-graph barrier), not instrumented here, so ThreadSanitizer
// cannot see that what the tick thread wrote before run() happens before op() on a pool thread,
// nor that op()'s writes (a sequence's sampler, its candidate array) happen before run()
// returns. It then reported the tick thread's next sample() of that sequence as a race with a
// pool thread whose stack it could not restore (tests/sanitizers/tsan.supp's race:ggml_ matches
// only a frame it sees). These two edges are stated to TSan here; other builds compile nothing.
void tsan_release([[maybe_unused]] void *edge) {
#ifdef SF_TSAN
    __tsan_release(edge);
#endif
}
void tsan_acquire([[maybe_unused]] void *edge) {
#ifdef SF_TSAN
    __tsan_acquire(edge);
#endif
}

}  // namespace

llama_token_data_array candidates_from(const float *logits, int32_t n_vocab,
                                       std::vector<llama_token_data> &scratch) {
    scratch.resize(static_cast<size_t>(n_vocab));
    for (int32_t t = 0; t < n_vocab; ++t) scratch[static_cast<size_t>(t)] = {t, logits[t], 0.0f};
    return llama_token_data_array{scratch.data(), scratch.size(), -1, false};
}

void sample_plain(plain_sample &s, int32_t n_vocab, std::vector<llama_token_data> &scratch) {
    llama_sampler *chain = common_sampler_get(s.sampler);
    gumbel_sampler_set_index(chain, s.index);
    llama_token_data_array cur = candidates_from(s.logits, n_vocab, scratch);
    llama_sampler_apply(chain, &cur);
    s.out = cur.data[cur.selected].id;
    common_sampler_accept(s.sampler, s.out, /*is_generated=*/true);
}

parallel_sampler::parallel_sampler(int32_t n_vocab, ggml_threadpool *threadpool, int n_threads)
    : n_vocab_(n_vocab), threadpool_(threadpool), n_threads_(n_threads) {
    ggml_init_params ip{ggml_tensor_overhead() * 4 + ggml_graph_overhead() + 1024, nullptr, false};
    ctx_ = ggml_init(ip);
    if (!ctx_) throw std::runtime_error("parallel sampling: cannot create its ggml context");
    ggml_tensor *a   = ggml_new_tensor_1d(ctx_, GGML_TYPE_F32, 1);
    ggml_tensor *out = ggml_map_custom1(ctx_, a, op, GGML_N_TASKS_MAX, this);
    graph_           = ggml_new_graph(ctx_);
    ggml_build_forward_expand(graph_, out);
    scratch_.resize(static_cast<size_t>(n_threads));
}

parallel_sampler::~parallel_sampler() {
    ggml_free(ctx_);
}

void parallel_sampler::run(std::vector<plain_sample> &reqs) {
    job_            = &reqs;
    ggml_cplan plan = ggml_graph_plan(graph_, n_threads_, threadpool_);
    if (plan.work_size > work_.size()) work_.resize(plan.work_size);
    plan.work_data = work_.data();
    tsan_release(&job_);  // the kick-off: the requests are ready
    ggml_graph_compute(graph_, &plan);
    tsan_acquire(&work_);  // the end barrier: every thread's samples are done
    job_ = nullptr;
}

void parallel_sampler::op(ggml_tensor *, const ggml_tensor *, int ith, int nth, void *self) {
    auto *p = static_cast<parallel_sampler *>(self);
    tsan_acquire(&p->job_);
    auto &reqs = *p->job_;
    for (size_t i = static_cast<size_t>(ith); i < reqs.size(); i += static_cast<size_t>(nth))
        sample_plain(reqs[i], p->n_vocab_, p->scratch_.at(static_cast<size_t>(ith)));
    tsan_release(&p->work_);
}

}  // namespace sf
