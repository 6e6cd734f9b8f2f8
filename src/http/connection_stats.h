// What the head's HTTP server counts (superfluid:http_* on /metrics), and the threads that
// handle requests (one each, at once, bounded by the caller: http/event_server.h).
// Threads: the counters are atomics, written by the I/O and request threads, read by /metrics;
// request_threads is called from the I/O thread and shut down from any.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace sf {

/** Counters of the HTTP server, shared with /metrics (superfluid:http_*). */
struct connection_stats {
    std::atomic<uint64_t> open{0};             // connections open now (idle ones included)
    std::atomic<uint64_t> accepted{0};         // connections accepted since start
    std::atomic<uint64_t> active{0};           // requests being handled now (request threads)
    std::atomic<uint64_t> refused{0};          // requests answered 503 (every thread busy)
    std::atomic<uint64_t> dropped{0};          // connections closed unanswered (no thread/fd)
    std::atomic<uint64_t> header_timeouts{0};  // answered 408: a request came too slowly
};

/** The counters in Prometheus text (superfluid:http_*). */
std::string connection_metrics_text(const connection_stats &s);

/**
 * Runs each job on a new thread of its own, at once (the caller bounds how many run).
 * shutdown() refuses new jobs and waits until the running ones return.
 */
class request_threads {
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

}  // namespace sf
