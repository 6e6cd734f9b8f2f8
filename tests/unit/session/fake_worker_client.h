// A worker_client without a worker: placements run in memory and produce a deterministic
// token stream (token i of a session is the same whatever placement generates it, as the
// counter-based sampler makes it for the real worker), one token per placement per tick().
// The test thread that calls tick() is the event thread. Faults are injected per tick:
// duplicated, reordered and dropped events, and the stream lost (the worker "dies"; health
// says not ready until restart()). Thread-safe: the session layer's resumer calls submit and
// health from its own thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "session/worker_client.h"

namespace sf::testing {

/** Token i of session `id`: what any placement of it generates at index i. */
inline session_event reference_token(const std::string &id, uint32_t i) {
    session_event ev;
    ev.index = i;
    ev.token = static_cast<token_id>((std::hash<std::string>{}(id) + 7919u * i) % 50000);
    ev.piece = "p" + std::to_string(i);
    ev.text  = "t" + std::to_string(i) + " ";
    return ev;
}

struct fault_rates {
    double duplicate = 0;  // an event is sent twice
    double reorder   = 0;  // a tick's message is shuffled
    double drop      = 0;  // a token event is never sent
};

class fake_worker_client final : public worker_client {
  public:
    /**
     * Every session generates `n_tokens` tokens then finishes (LENGTH); stream ids start at
     * `stream_base` + 1 (a model set's or node pool's base for this client).
     */
    explicit fake_worker_client(uint32_t n_tokens, uint64_t stream_base = 0)
        : n_tokens_(n_tokens), stream_(stream_base + 1) {}

    void set_listener(worker_listener *l) override { listener_ = l; }
    bool start() override { return true; }
    void stop() override {}

    bool submit(const worker_submission &sub, accepted_session &acc, start_error &err) override {
        std::chrono::milliseconds delay;
        {
            std::lock_guard lk(mu_);
            delay          = submit_delay_;
            max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
        }
        std::this_thread::sleep_for(delay);  // a worker rendering the prompt
        std::lock_guard lk(mu_);
        --in_flight_;
        submissions_.push_back(sub);
        if (fail_submits_ > 0 || !up_) {
            if (fail_submits_ > 0) --fail_submits_;
            err.type    = start_error::kind::UNAVAILABLE;
            err.message = "fake: unavailable";
            return false;
        }
        placements_[sub.session_id] = {sub.epoch, static_cast<uint32_t>(sub.resume_tokens.size())};
        acc.prompt_tokens           = 5;
        acc.stream                  = stream_;
        return true;
    }
    void cancel(const std::string &id, uint64_t epoch) override {
        std::lock_guard lk(mu_);
        cancels_.push_back(id);
        auto it = placements_.find(id);
        if (it != placements_.end() && (epoch == 0 || it->second.epoch == epoch))
            it->second.cancelled = true;
    }
    bool stream_open(uint64_t stream) override {
        std::lock_guard lk(mu_);
        return up_ && stream == stream_;
    }
    bool render(const worker_submission &, accepted_session &acc, start_error &) override {
        acc.prompt_tokens = 5;
        return true;
    }
    bool embed(const embed_batch &, std::vector<embedding> &, start_error &err) override {
        err.type = start_error::kind::UNAVAILABLE;
        return false;
    }
    bool model_info(model_description &) override { return false; }
    worker_health health() override {
        std::lock_guard lk(mu_);
        worker_health h;
        h.reachable    = up_;
        h.status.ready = up_;
        return h;
    }
    counters stats() override { return {}; }

    // ---- test controls (the event thread) ----

    /** One worker tick: the next token (or the finish) of every running placement. */
    void tick(std::mt19937 &rng, const fault_rates &f = {}) {
        std::vector<worker_event> batch;
        uint64_t stream;
        {
            std::lock_guard lk(mu_);
            if (!up_) return;
            stream = stream_;
            std::bernoulli_distribution dup(f.duplicate), drop(f.drop), shuffle(f.reorder);
            for (auto it = placements_.begin(); it != placements_.end();) {
                auto &[id, p] = *it;
                worker_event we{id, p.epoch, {}};
                const bool done = p.cancelled || p.next >= n_tokens_;
                if (done) {
                    we.ev.type   = session_event::kind::FINISHED;
                    we.ev.reason = p.cancelled ? finish_reason::CANCELLED : finish_reason::LENGTH;
                    we.ev.completion_tokens = static_cast<int32_t>(p.next);
                } else {
                    we.ev = reference_token(id, p.next++);
                }
                // A finish is never dropped: a worker that never ends a session is a hung one
                // (the watchdog's business), not a stream fault.
                if (done || !drop(rng)) {
                    if (dup(rng)) batch.push_back(we);
                    batch.push_back(std::move(we));
                }
                it = done ? placements_.erase(it) : std::next(it);
            }
            if (shuffle(rng)) std::shuffle(batch.begin(), batch.end(), rng);
        }
        if (!batch.empty()) listener_->on_events(stream, batch);
    }
    /** Sends `batch` as one message of the current stream (hand-made sequences). */
    void send(std::vector<worker_event> batch) { listener_->on_events(stream_id(), batch); }
    /** Sends `batch` on stream `stream` (another node's: one the placement is not on). */
    void send_on(uint64_t stream, std::vector<worker_event> batch) {
        listener_->on_events(stream, batch);
    }
    /** The worker dies: its stream ends and every placement is gone; health fails. */
    void lose_stream() {
        uint64_t s;
        {
            std::lock_guard lk(mu_);
            up_ = false;
            s   = stream_;
            placements_.clear();
        }
        listener_->on_stream_lost(s);
    }
    /** The worker is back, with a new stream. */
    void restart() {
        std::lock_guard lk(mu_);
        up_ = true;
        ++stream_;
    }
    /** Each submit takes `d` (outside the lock: submits from several threads overlap). */
    void set_submit_delay(std::chrono::milliseconds d) {
        std::lock_guard lk(mu_);
        submit_delay_ = d;
    }
    /** The most submits that were in progress at once. */
    int max_submits_in_flight() {
        std::lock_guard lk(mu_);
        return max_in_flight_;
    }
    void fail_next_submits(int n) {
        std::lock_guard lk(mu_);
        fail_submits_ = n;
    }
    uint64_t stream_id() {
        std::lock_guard lk(mu_);
        return stream_;
    }
    bool running(const std::string &id) {
        std::lock_guard lk(mu_);
        return placements_.count(id) > 0;
    }
    uint64_t epoch_of(const std::string &id) {
        std::lock_guard lk(mu_);
        auto it = placements_.find(id);
        return it == placements_.end() ? 0 : it->second.epoch;
    }
    std::vector<worker_submission> submissions() {
        std::lock_guard lk(mu_);
        return submissions_;
    }
    std::vector<std::string> cancels() {
        std::lock_guard lk(mu_);
        return cancels_;
    }

  private:
    struct placement {
        uint64_t epoch = 0;
        uint32_t next  = 0;
        bool cancelled = false;
    };
    const uint32_t n_tokens_;
    worker_listener *listener_ = nullptr;
    std::mutex mu_;
    bool up_          = true;
    uint64_t stream_  = 1;  // set by the constructor
    int fail_submits_ = 0;
    std::chrono::milliseconds submit_delay_{0};
    int in_flight_     = 0;
    int max_in_flight_ = 0;
    std::map<std::string, placement> placements_;
    std::vector<worker_submission> submissions_;
    std::vector<std::string> cancels_;
};

}  // namespace sf::testing
