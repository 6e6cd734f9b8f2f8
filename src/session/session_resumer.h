// Worker supervision as the session layer sees it: the sessions whose placement was lost (the
// worker died, restarted or was cut off; or a head restart found them unfinished in the
// journal) are resubmitted from one thread of its own: the sessions queued together (a lost
// worker loses all of its sessions at once) are resubmitted together, each on a short-lived
// thread (at most k_parallel_resumes at a time). Each waits for the worker to be ready
// (worker_client::wait_ready, bounded), for the session's tokens so far to be committed, then
// is submitted again with them as its resume point under a new epoch. A session lost more than
// k_max_losses times fails with a clear error. (Restarting a dead worker process, with its
// backoff, is the worker client's business: placement/local_worker.h.)
//
// Threads: enqueue() from any thread (the relay's on_lost); everything else on the resumer's
// own thread and the resume threads it starts and joins (the relay and the worker client are
// thread-safe). stop() joins it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "session/session_relay.h"
#include "session/worker_client.h"

namespace sf {

class session_resumer {
  public:
    /** Losses a session survives; the next one fails it (a session that keeps crashing). */
    static constexpr int k_max_losses = 3;
    /** Sessions resubmitted at once (one thread each). */
    static constexpr size_t k_parallel_resumes = 16;

    /** `wait_ready`: how long to wait for the worker after a loss before counting another. */
    session_resumer(session_relay &relay, worker_client &worker,
                    std::chrono::milliseconds wait_ready = std::chrono::seconds(120));
    ~session_resumer();

    void start();
    /** Ends the thread; sessions still queued stay unfinished (journaled: resumed next start). */
    void stop();
    /** Queues lost sessions (those lost together are resubmitted together). */
    void enqueue(const std::vector<std::string> &ids);

  private:
    void run();
    void resume(const std::string &id);
    // Resumes `ids` together (resume() each, on up to k_parallel_resumes threads).
    void resume_all(const std::vector<std::string> &ids);
    // Waits for the worker's readiness, until the session no longer needs it or the deadline.
    bool wait_for_worker(const session &s);

    session_relay &relay_;
    worker_client &worker_;
    std::chrono::milliseconds wait_ready_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::string> queue_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace sf
