#include "http/connection_gate.h"

#include <algorithm>
#include <system_error>
#include <thread>

#include "http/header_deadline.h"

namespace sf {

namespace {
thread_local bool t_overflowing = false;
}

bool connection_threads::run(std::function<void()> fn) {
    std::lock_guard lk(mu_);
    if (shut_) return false;
    try {
        std::thread([this, fn = std::move(fn)]() mutable {
            fn();
            fn = nullptr;  // what the job holds goes before shutdown() may return
            std::lock_guard done(mu_);
            --running_;
            idle_.notify_all();  // under the lock: `this` is not touched after it is released
        }).detach();
    } catch (const std::system_error &) {
        return false;  // no thread could be made: httplib closes the socket
    }
    ++running_;
    return true;
}

void connection_threads::shutdown() {
    std::unique_lock lk(mu_);
    shut_ = true;
    idle_.wait(lk, [&] { return running_ == 0; });
}

connection_gate::connection_gate(size_t max_connections, std::shared_ptr<connection_stats> stats,
                                 std::shared_ptr<header_deadline> deadline, size_t overflow_threads,
                                 size_t overflow_queue)
    : max_(std::max<size_t>(1, max_connections)),
      stats_(std::move(stats)),
      deadline_(std::move(deadline)),
      overflow_(overflow_threads, overflow_threads, overflow_queue) {}

bool connection_gate::enqueue(std::function<void()> fn) {
    // Every accepted connection is tracked, the overflow's too (a slow client must not hold an
    // overflow thread either, and an untracked socket would confuse the next on_accept()).
    auto dl                    = deadline_;
    const tracked_connection c = dl ? dl->on_accept() : tracked_connection{};
    auto stats                 = stats_;
    if (stats_->open.fetch_add(1) < max_) {
        ++stats_->accepted;
        if (served_.run([fn = std::move(fn), stats, dl, c] {
                if (dl) dl->begin(c);
                fn();
                if (dl) dl->end();
                --stats->open;
            }))
            return true;
        if (dl) dl->forget(c);
        --stats_->open;
        return false;
    }
    --stats_->open;
    if (overflow_.enqueue([fn = std::move(fn), dl, c] {
            if (dl) dl->begin(c);
            t_overflowing = true;
            fn();
            t_overflowing = false;
            if (dl) dl->end();
        }))
        return true;
    if (dl) dl->forget(c);
    ++stats_->dropped;
    return false;  // httplib closes the socket
}

void connection_gate::shutdown() {
    served_.shutdown();
    overflow_.shutdown();
}

bool connection_gate::overflowing() {
    return t_overflowing;
}

}  // namespace sf
