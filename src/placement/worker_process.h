// Starts the local worker as a child process (`superfluid worker …`) and keeps it alive:
// when it exits unexpectedly it is restarted with a growing backoff (0.1 s doubling to 10 s,
// reset after 30 s of uptime). Thread-safe; the supervising thread is its own.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sf {

class worker_process {
  public:
    /** `argv`: the worker's full command line (argv[0] = executable path). */
    explicit worker_process(std::vector<std::string> argv);
    ~worker_process();

    /** Spawns the worker and the supervising thread. Returns false if fork/exec fails. */
    bool start();
    /** SIGTERM, wait up to 5 s, then SIGKILL; no restart afterwards. */
    void stop();
    /** Current child pid, or -1 between restarts. */
    pid_t pid() const { return pid_.load(); }
    /** Times the worker was (re)started. */
    int starts() const { return starts_.load(); }

  private:
    pid_t spawn();
    void supervise();

    std::vector<std::string> argv_;
    std::atomic<pid_t> pid_{-1};
    std::atomic<int> starts_{0};
    std::atomic<bool> stopping_{false};
    std::mutex mu_;
    std::condition_variable cv_;
    std::thread thread_;
};

}  // namespace sf
