// The local worker as a worker_client: a supervised child process (`superfluid worker …`,
// worker_process.h restarts it with a backoff) spoken to with gRPC over a unix socket
// (grpc_worker_link.h: the Events reader and the unary calls). A watchdog thread kills a
// worker that stops answering Health for 10 s (hung, SIGSTOPped) so the supervisor restarts it.
//
// Threads: the public methods are thread-safe. Listener calls come from the link's events
// thread only. mu_ guards stop_ for the watchdog.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "placement/linked_worker.h"
#include "placement/worker_process.h"

namespace sf {

class local_worker final : public linked_worker {
  public:
    /**
     * `argv`: the worker's command line (argv[0] = executable); `socket_path`: where it
     * listens; `stream_base`: see grpc_worker_link; `standby`: keep a hot standby worker
     * (worker_process.h).
     */
    local_worker(std::vector<std::string> argv, std::string socket_path, uint64_t stream_base = 0,
                 standby_mode standby = standby_mode::off);
    ~local_worker() override;

    bool start() override;
    void stop() override;
    counters stats() override;

  private:
    void watchdog();

    worker_process process_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread watchdog_thread_;
};

}  // namespace sf
