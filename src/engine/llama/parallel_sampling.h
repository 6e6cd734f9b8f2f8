// Sampling many sequences of one tick on two threads (llama_engine::sample_many).
//
// Why: after a decode, each sequence's sampler chain runs over the whole vocabulary (151,936
// candidates for Qwen3: building the candidate array, top-k, the Gumbel stage), ~0.2 ms per
// sequence on this project's 2-core VM — ~6 ms of a ~32 ms tick at 30 sequences, while
// ggml's second compute thread only spins waiting for the next graph.
//
// Only plain chains go in parallel: no grammar and no reasoning budget, whose samplers live in
// common_sampler outside the chain. For those, sample_plain does what common_sampler_sample
// does (candidates from the logits row, the chain, accept), so the tokens are the ones sample()
// would draw: token i's draw depends only on (seed, i) and the logits (gumbel_sampler.h).
//
// Threads: owned by the engine's tick thread, which calls run(); ggml's compute threads run
// the samples only inside run(), each on its own entries and candidate array.
#pragma once

#include <ggml-cpu.h>
#include <ggml.h>
#include <llama.h>

#include <vector>

struct common_sampler;

namespace sf {

/** One plain sequence to sample: its sampler, the logits row of the last decode, its index. */
struct plain_sample {
    common_sampler *sampler = nullptr;
    const float *logits     = nullptr;  // n_vocab floats (llama_get_logits_ith)
    uint32_t index          = 0;        // the token's number in the session (Gumbel draw)
    llama_token out         = LLAMA_TOKEN_NULL;
};

/**
 * The candidate array over a logits row: every token id of `n_vocab` with its logit, in
 * `scratch` (resized, reused), nothing selected. As common_sampler's set_logits builds it.
 */
llama_token_data_array candidates_from(const float *logits, int32_t n_vocab,
                                       std::vector<llama_token_data> &scratch);

/**
 * Samples `s` (into s.out) as common_sampler_sample + common_sampler_accept would for a chain
 * without grammar or reasoning budget; `scratch` is the candidate array, reused (resized to
 * n_vocab).
 */
void sample_plain(plain_sample &s, int32_t n_vocab, std::vector<llama_token_data> &scratch);

/**
 * Runs a tick's plain samples on ggml's compute threadpool (a one-node graph whose custom op
 * samples entry i on compute thread i mod n): the threads that just decoded, still polling for
 * work, take it at once. (A helper thread of our own was tried first: ggml's second thread
 * spun on the other core meanwhile, and pausing it made the next decode's kickoff wait for
 * the wake-up, ~5 ms of a 32 ms tick at 30 sequences.)
 */
class parallel_sampler {
  public:
    /** `threadpool`: the context's, `n_threads` its size (both outlive this object). */
    parallel_sampler(int32_t n_vocab, ggml_threadpool *threadpool, int n_threads);
    ~parallel_sampler();
    parallel_sampler(const parallel_sampler &)            = delete;
    parallel_sampler &operator=(const parallel_sampler &) = delete;

    /** Samples every entry of `reqs` (fills .out). Tick thread, between decodes. */
    void run(std::vector<plain_sample> &reqs);

  private:
    static void op(ggml_tensor *dst, const ggml_tensor *a, int ith, int nth, void *self);

    const int32_t n_vocab_;
    ggml_threadpool *threadpool_;
    const int n_threads_;
    ggml_context *ctx_  = nullptr;
    ggml_cgraph *graph_ = nullptr;
    std::vector<std::vector<llama_token_data>> scratch_;  // a candidate array per thread
    std::vector<uint8_t> work_;
    std::vector<plain_sample> *job_ = nullptr;  // set during run()
};

}  // namespace sf
