#include "engine/llama/deferred_sampling.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <exception>

#include "engine/llama/sampler_build.h"

namespace sf {

deferred_sampler::deferred_sampler(int32_t n_vocab)
    : n_vocab_(n_vocab), thread_([this] { loop(); }) {}

void deferred_sampler::on_ready(std::function<void()> f) {
    std::lock_guard lk(ready_mu_);
    on_ready_ = std::move(f);
}

deferred_sampler::~deferred_sampler() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void deferred_sampler::submit(int seq, common_sampler *chain, llama_sampler *grammar,
                              const float *logits, uint32_t index) {
    job j{seq, chain, grammar, std::vector<float>(logits, logits + n_vocab_), index};
    {
        std::lock_guard lk(mu_);
        queue_.push_back(std::move(j));
    }
    cv_.notify_all();
}

void deferred_sampler::take(std::vector<std::pair<int, llama_token>> &out) {
    std::lock_guard lk(mu_);
    out.insert(out.end(), done_.begin(), done_.end());
    done_.clear();
}

void deferred_sampler::forget(int seq) {
    std::unique_lock lk(mu_);
    std::erase_if(queue_, [&](const job &j) { return j.seq == seq; });
    cv_.wait(lk, [&] { return running_ != seq; });
    std::erase_if(done_, [&](const auto &d) { return d.first == seq; });
}

void deferred_sampler::loop() {
    // Linux scheduling policies are per thread: only this one yields to the decode's threads.
    // SCHED_IDLE runs it only on a core nothing else wants; where that is refused, nice 19.
    sched_param none{};
    if (sched_setscheduler(0, SCHED_IDLE, &none) != 0)
        setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
    std::vector<llama_token_data> scratch;
    std::unique_lock lk(mu_);
    for (;;) {
        cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        job j = std::move(queue_.front());
        queue_.pop_front();
        running_ = j.seq;
        lk.unlock();
        llama_token t = LLAMA_TOKEN_NULL;  // the grammar failed: the sequence ends in an error
        try {
            t = sample_with_grammar(j.chain, j.grammar, j.logits.data(), n_vocab_, j.index,
                                    scratch);
        } catch (const std::exception &) {
        }
        lk.lock();
        running_ = -1;
        done_.emplace_back(j.seq, t);
        cv_.notify_all();  // a forget() waiting for this sequence
        lk.unlock();
        {
            std::lock_guard rl(ready_mu_);
            if (on_ready_) on_ready_();
        }
        lk.lock();
    }
}

}  // namespace sf
