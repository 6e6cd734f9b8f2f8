// Starts the local worker as a child process (`superfluid worker …`) and keeps it alive:
// when it exits unexpectedly it is restarted with a growing backoff (0.1 s doubling to 10 s,
// reset after 30 s of uptime).
//
// Hot standby (serve --standby, issue #21): a second worker process, spawned once the worker
// is ready, loads the model, says so ('r') on a socket pair and waits without listening. When the
// worker dies and the standby has loaded, the supervisor writes one byte ('g') to that socket: the
// standby binds the socket at once and the head's link reconnects, so streams resume after a
// reconnect instead of a model load. A standby is spawned in the background kStandbyDelay (2 s)
// after the worker it backs is ready. The model is mmapped, so a standby costs its private memory
// (KV cache, compute buffers, heap: RssAnon), which `auto` measures on the running worker before it
// spawns one.
//
// A standby's model load takes the cores the worker's decode needs (on the 2-core VM the chat's
// TTFTs spread while one loaded beside agents). So a standby is spawned only while the worker has
// no session running or waiting (`busy`), and one still loading when sessions arrive is stopped
// (SIGSTOP) until the worker is idle again, or until the worker dies (it is then the next
// worker's standby). A standby that has loaded waits in poll() and costs no CPU: it is never
// stopped. Under steady load there is no standby: a crash then costs a model load, as without.
//
// Threads: the public methods are thread-safe; the supervising thread is its own (it alone
// spawns, reaps and promotes).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace sf {

/** When a hot standby worker is kept: never, always, or when memory allows (the default). */
enum class standby_mode { off, on, automatic };

/** Parses "off" | "on" | "auto"; false for anything else. */
bool parse_standby_mode(const std::string &s, standby_mode &out);

class worker_process {
  public:
    /**
     * `argv`: the worker's full command line (argv[0] = executable path); `standby`: whether to
     * keep a hot standby; `ready`: whether the running worker has loaded its model (the
     * standby is spawned only after that; called on the supervising thread); `busy`: whether
     * the running worker has sessions running or waiting (a loading standby waits while it has;
     * empty: never; called on the supervising thread every 100 ms while a standby loads).
     */
    explicit worker_process(std::vector<std::string> argv, standby_mode standby = standby_mode::off,
                            std::function<bool()> ready = {}, std::function<bool()> busy = {});
    ~worker_process();

    /**
     * True once a worker exited with k_worker_exit_config (its engine refused the options):
     * the supervisor then restarts nothing and sends this process SIGTERM, so `serve` stops
     * and exits 1 (or `join`, on a guest) with the worker's error as the last word in the log.
     */
    static bool config_failed();

    /** Spawns the worker and the supervising thread. Returns false if fork/exec fails. */
    bool start();
    /** SIGTERM to the worker and the standby, wait up to 5 s, then SIGKILL; no restart. */
    void stop();
    /** Current child pid, or -1 between restarts. */
    pid_t pid() const { return pid_.load(); }
    /** Times the worker was (re)started, promotions of the standby included. */
    int starts() const { return starts_.load(); }
    /** The standby's pid, or -1 when none runs. */
    pid_t standby_pid() const { return standby_pid_.load(); }
    /** True once the standby has loaded its model (it said so on its socket). */
    bool standby_ready() const { return standby_ready_.load(); }
    /** Times a standby took over from a worker that died. */
    int promotions() const { return promotions_.load(); }
    /** Times a loading standby was stopped because the worker had sessions. */
    int standby_pauses() const { return standby_pauses_.load(); }

  private:
    struct child {
        pid_t pid   = -1;
        int pidfd   = -1;     // pidfd_open: readable when the child exits (-1: poll on a timer)
        int go_fd   = -1;     // a standby's socket: it sends 'r' once loaded; our 'g' promotes it
        bool paused = false;  // a loading standby we stopped (SIGSTOP) while the worker is busy
    };
    child spawn(bool standby);
    void supervise();
    void wait_events(const child &a, const child &b, int timeout_ms);
    bool standby_allowed(pid_t worker);
    void stop_children(child &a, child &b);
    void pace_standby(child &standby, bool worker_busy);

    std::vector<std::string> argv_;
    standby_mode standby_;
    std::function<bool()> ready_;
    std::function<bool()> busy_;
    std::atomic<pid_t> pid_{-1};
    std::atomic<pid_t> standby_pid_{-1};
    std::atomic<bool> standby_ready_{false};
    std::atomic<int> starts_{0};
    std::atomic<int> promotions_{0};
    std::atomic<int> standby_pauses_{0};
    std::atomic<bool> stopping_{false};
    int wake_[2] = {-1, -1};  // stop() writes to wake_[1] to end a wait at once
    std::thread thread_;
};

}  // namespace sf
