#include "placement/local_worker.h"

#include <signal.h>

#include "util/log.h"

namespace sf {

local_worker::local_worker(std::vector<std::string> argv, std::string socket_path,
                           uint64_t stream_base, standby_mode standby)
    : process_(
          std::move(argv), standby,
          [this] {
              auto h = link_->health();
              return h.reachable && h.status.ready;
          },
          [this] {
              auto h = link_->health();
              return h.reachable &&
                     (h.status.active_sequences > 0 || h.status.waiting_sessions > 0);
          }) {
    auto channel =
        grpc::CreateCustomChannel("unix:" + socket_path, grpc::InsecureChannelCredentials(),
                                  grpc_worker_link::channel_args());
    link_ = std::make_unique<grpc_worker_link>(channel, "local worker", stream_base);
}

local_worker::~local_worker() {
    stop();
}

bool local_worker::start() {
    if (!process_.start()) return false;
    link_->start_events();
    watchdog_thread_ = std::thread([this] { watchdog(); });
    return true;
}

void local_worker::stop() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (watchdog_thread_.joinable()) watchdog_thread_.join();
    process_.stop();
    link_->stop();
}

// A worker that does not answer Health for kWatchdogMisses seconds in a row while its process
// exists is hung (a live worker answers on gRPC threads even during a long decode): kill it,
// the supervisor restarts it, and its sessions resume instead of hanging.
void local_worker::watchdog() {
    constexpr int kWatchdogMisses = 10;
    int misses                    = 0;
    std::unique_lock lk(mu_);
    while (!cv_.wait_for(lk, std::chrono::seconds(1), [&] { return stop_; })) {
        lk.unlock();
        pid_t pid = process_.pid();
        bool ok   = health().reachable;
        misses    = ok || pid <= 0 ? 0 : misses + 1;
        if (misses >= kWatchdogMisses) {
            SF_LOG_ERROR("head", "worker %d has not answered for %d s: killing it", pid, misses);
            kill(pid, SIGKILL);
            misses = 0;
        }
        lk.lock();
    }
}

worker_client::counters local_worker::stats() {
    counters c{process_.pid(), process_.starts(), link_->batches(), link_->events()};
    c.standby_pid   = process_.standby_pid();
    c.promotions    = process_.promotions();
    c.standby_ready = process_.standby_ready();
    return c;
}

}  // namespace sf
