#include "http/connection_stats.h"

#include <system_error>
#include <thread>

namespace sf {

std::string connection_metrics_text(const connection_stats &s) {
    auto line = [](const char *name, const char *type, const char *help, uint64_t v) {
        return std::string("# HELP superfluid:") + name + " " + help +
               "\n# TYPE superfluid:" + name + " " + type + "\nsuperfluid:" + name + " " +
               std::to_string(v) + "\n";
    };
    return line("http_header_timeouts_total", "counter",
                "requests answered 408 because their headers or body came too slowly",
                s.header_timeouts.load()) +
           line("http_connections_open", "gauge", "connections open (idle keep-alive included)",
                s.open.load()) +
           line("http_connections_accepted_total", "counter", "connections accepted",
                s.accepted.load()) +
           line("http_requests_active", "gauge",
                "requests being handled (--http-threads bounds it)", s.active.load()) +
           line("http_connections_refused_total", "counter",
                "requests answered 503 because --http-threads requests were being handled",
                s.refused.load()) +
           line("http_connections_dropped_total", "counter",
                "connections closed unanswered (no thread or descriptor could be had)",
                s.dropped.load());
}

bool request_threads::run(std::function<void()> fn) {
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
        return false;
    }
    ++running_;
    return true;
}

void request_threads::shutdown() {
    std::unique_lock lk(mu_);
    shut_ = true;
    idle_.wait(lk, [&] { return running_ == 0; });
}

}  // namespace sf
