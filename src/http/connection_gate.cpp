#include "http/connection_gate.h"

#include <algorithm>

namespace sf {

namespace {
thread_local bool t_overflowing = false;
}

connection_gate::connection_gate(size_t max_connections, std::shared_ptr<connection_stats> stats,
                                 size_t base_threads, size_t overflow_threads,
                                 size_t overflow_queue)
    : max_(std::max<size_t>(1, max_connections)),
      stats_(std::move(stats)),
      served_(std::min(base_threads, max_), max_),
      overflow_(overflow_threads, overflow_threads, overflow_queue) {}

bool connection_gate::enqueue(std::function<void()> fn) {
    if (stats_->open.fetch_add(1) < max_) {
        ++stats_->accepted;
        auto stats = stats_;
        if (served_.enqueue([fn = std::move(fn), stats] {
                fn();
                --stats->open;
            }))
            return true;
        --stats_->open;
        return false;
    }
    --stats_->open;
    auto stats = stats_;
    if (overflow_.enqueue([fn = std::move(fn), stats] {
            t_overflowing = true;
            fn();
            t_overflowing = false;
        }))
        return true;
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
