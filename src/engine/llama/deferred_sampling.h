// Sampling a grammar-constrained sequence off the tick thread (issue #38 item 4).
//
// Why: a request's output grammar is checked against the whole vocabulary whenever the
// chain's pick breaks it (151,936 candidates for Qwen3): 40-100 ms per token for the deepest
// schema the caps let through. On the tick thread that time was added to every running
// sequence's next token (a concurrent request's time to first token grew ~6x). Here such a
// sequence's logits row is copied after the decode and sampled on one background thread; the
// tick goes on without it, and the sequence joins a later tick when its token is back.
//
// The thread runs at the lowest CPU priority (SCHED_IDLE, else nice 19): on a machine whose
// cores the decode keeps busy, the constrained request waits rather than the others.
//
// Threads: submit, take and forget are called by the tick thread only. While a job is queued
// or running, the background thread alone touches its sequence's samplers; forget(seq) waits
// for that before the tick thread frees or replaces them. `on_ready` runs on the background
// thread after each job, outside this class's state lock (its caller may hold a lock of its own
// while it calls forget()).
#pragma once

#include <llama.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

struct common_sampler;

namespace sf {

class deferred_sampler {
  public:
    /** `n_vocab`: the logits row length. */
    explicit deferred_sampler(int32_t n_vocab);
    ~deferred_sampler();
    deferred_sampler(const deferred_sampler &)            = delete;
    deferred_sampler &operator=(const deferred_sampler &) = delete;

    /**
     * Queues the sample of token `index` of sequence `seq` (sample_with_grammar) from `logits`
     * (copied now). The samplers must stay alive until take() returns the token or forget(seq).
     */
    void submit(int seq, common_sampler *chain, llama_sampler *grammar, const float *logits,
                uint32_t index);
    /** Appends the samples finished since the last call, as (seq, token). */
    void take(std::vector<std::pair<int, llama_token>> &out);
    /** Drops seq's queued job and finished token, and waits for its running one. */
    void forget(int seq);
    /**
     * Sets what runs (on the background thread, no lock of this class held) after each
     * finished sample; null: nothing. Returns after any call of the previous one ended.
     */
    void on_ready(std::function<void()> f);

  private:
    struct job {
        int seq                = -1;
        common_sampler *chain  = nullptr;
        llama_sampler *grammar = nullptr;
        std::vector<float> logits;
        uint32_t index = 0;
    };
    void loop();

    const int32_t n_vocab_;
    std::mutex ready_mu_;  // guards on_ready_ and its calls
    std::function<void()> on_ready_;
    mutable std::mutex mu_;       // guards the rest; never held while on_ready_ runs
    std::condition_variable cv_;  // jobs queued, a job done, or stopping
    std::deque<job> queue_;
    std::vector<std::pair<int, llama_token>> done_;
    int running_   = -1;  // the seq whose job the thread runs now
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace sf
