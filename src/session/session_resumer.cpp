#include "session/session_resumer.h"

#include <algorithm>

#include "util/log.h"

namespace sf {

session_resumer::session_resumer(session_relay &relay, worker_client &worker,
                                 std::chrono::milliseconds wait_ready)
    : relay_(relay), worker_(worker), wait_ready_(wait_ready) {}

session_resumer::~session_resumer() {
    stop();
}

void session_resumer::start() {
    thread_ = std::thread([this] { run(); });
}

void session_resumer::stop() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void session_resumer::enqueue(const std::vector<std::string> &ids) {
    {
        std::lock_guard lk(mu_);
        queue_.insert(queue_.end(), ids.begin(), ids.end());
    }
    cv_.notify_one();
}

void session_resumer::run() {
    for (;;) {
        std::vector<std::string> ids;
        {
            std::unique_lock lk(mu_);
            cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
            if (stop_) return;
            ids.assign(queue_.begin(), queue_.end());
            queue_.clear();
        }
        resume_all(ids);
    }
}

void session_resumer::resume_all(const std::vector<std::string> &ids) {
    // A lost worker loses all its sessions at once: they wait for one readiness and their
    // submits (render + tokenize on the worker's request threads) overlap instead of queueing
    // one behind another. At most k_parallel_resumes threads at a time.
    for (size_t i = 0; i < ids.size(); i += k_parallel_resumes) {
        const size_t end = std::min(ids.size(), i + k_parallel_resumes);
        if (end - i == 1) {
            resume(ids[i]);
            continue;
        }
        std::vector<std::thread> threads;
        for (size_t j = i; j < end; ++j) threads.emplace_back([this, &ids, j] { resume(ids[j]); });
        for (auto &t : threads) t.join();
    }
}

bool session_resumer::wait_for_worker(const session &s) {
    const auto deadline = std::chrono::steady_clock::now() + wait_ready_;
    for (;;) {
        {
            std::lock_guard lk(mu_);
            if (stop_) return false;
        }
        if (s.cancel_requested() || s.finished()) return false;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        // Woken by the worker's readiness; the slice bounds how late a stop or a cancel is seen.
        if (worker_.wait_ready(std::min(left, std::chrono::milliseconds(250)))) return true;
    }
}

void session_resumer::resume(const std::string &id) {
    auto lost = relay_.lost(id);
    if (!lost) return;  // finished or resumed meanwhile
    auto &s = *lost->s;
    if (lost->losses > k_max_losses) {
        return relay_.fail(id, "the inference worker failed " + std::to_string(lost->losses) +
                                   " times during this session; giving up on it");
    }
    if (lost->losses > 0)
        SF_LOG_WARN("head", "session %s: worker lost at token %zu; resuming (%d/%d)", id.c_str(),
                    lost->next_index, lost->losses, k_max_losses);
    const bool ready = wait_for_worker(s);
    // The resume point is what the journal holds: wait for the tokens still being committed.
    s.wait_tokens(lost->next_index);
    if (s.cancel_requested() || s.finished()) return relay_.fail(id, "");
    if (!ready) {
        {
            std::lock_guard lk(mu_);
            if (stop_) return;  // shutting down: stays unfinished in the journal
        }
        return relay_.fail(id, "the inference worker did not come back within " +
                                   std::to_string(wait_ready_.count() / 1000) + " s");
    }
    worker_submission sub = lost->sub;
    sub.resume_tokens     = s.token_ids();
    sub.epoch             = relay_.prepare(id);
    accepted_session acc;
    start_error err;
    if (!worker_.submit(sub, acc, err)) {
        if (err.type == start_error::kind::UNAVAILABLE) return relay_.lose_again(id);
        return relay_.fail(id, "the session could not be resumed: " + err.message);
    }
    relay_.activate(lost->s, sub, acc.stream, s.started());
    if (s.cancel_requested()) relay_.cancel(id);
}

}  // namespace sf
