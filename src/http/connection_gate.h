// Connection admission for the head's HTTP server: cpp-httplib serves each connection on one
// thread for its whole life (streams included), and its stock pool queues connections beyond
// its threads without a word, so a person's question could wait behind 128 agents' idle
// keep-alive connections. The gate serves up to `max_connections` at once (threads grow on
// demand) and hands the next ones to a small overflow pool whose thread answers the first
// request with 503 + Retry-After in the caller's API shape (http_server's pre-routing handler
// asks overflowing()) and closes; beyond the overflow's queue a connection is closed unanswered.
// A served connection gets a thread of its own at once (connection_threads below): httplib's
// ThreadPool grows only when it sees no idle thread, and a burst of connections arriving
// before its idle threads woke left one queued behind a stream for the stream's whole life
// (integration.cluster saw /api/nodes wait 4.4 s behind 8 streams).
// Threads: enqueue() runs on httplib's accept thread; the counters are atomics read by /metrics.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include <cpp-httplib/httplib.h>

namespace sf {

/** Counters of the gate, shared with /metrics (superfluid:http_connections_*). */
struct connection_stats {
    std::atomic<uint64_t> open{0};      // connections being served now
    std::atomic<uint64_t> accepted{0};  // connections served since start
    std::atomic<uint64_t> refused{0};   // answered 503 (over the limit)
    std::atomic<uint64_t> dropped{0};   // closed unanswered (the overflow queue was full too)
    std::atomic<uint64_t> header_timeouts{0};  // answered 408: headers too slow (header_deadline)
};

class header_deadline;

/**
 * Runs each job on a new thread of its own, at once (the caller bounds how many run).
 * shutdown() refuses new jobs and waits until the running ones return.
 */
class connection_threads {
  public:
    /** False after shutdown() or when no thread can be made. */
    bool run(std::function<void()> fn);
    void shutdown();

  private:
    std::mutex mu_;
    std::condition_variable idle_;
    size_t running_ = 0;
    bool shut_      = false;
};

/** A cpp-httplib task queue with a connection limit (see the file comment). */
class connection_gate final : public httplib::TaskQueue {
  public:
    /**
     * `max_connections` (>= 1) served at once, each on its own thread; the overflow
     * answers with `overflow_threads` threads and queues at most `overflow_queue` connections.
     * `deadline` (may be null) tracks each served connection (header_deadline.h).
     */
    connection_gate(size_t max_connections, std::shared_ptr<connection_stats> stats,
                    std::shared_ptr<header_deadline> deadline = nullptr,
                    size_t overflow_threads = 2, size_t overflow_queue = 64);

    bool enqueue(std::function<void()> fn) override;
    void shutdown() override;

    /** True on an overflow thread: the request being read must be refused (503). */
    static bool overflowing();

  private:
    size_t max_;
    std::shared_ptr<connection_stats> stats_;
    std::shared_ptr<header_deadline> deadline_;
    connection_threads served_;
    httplib::ThreadPool overflow_;
};

}  // namespace sf
