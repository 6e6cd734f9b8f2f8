// A deadline for reading a request's line, headers and body (slowloris): cpp-httplib gives each
// read call a timeout but no bound on the whole, so a client that sends one byte a second holds an
// HTTP thread forever. The deadline is armed when a connection starts and after each response
// (the next keep-alive request; a streamed response: once its body is out, see
// after_streamed_body), disarmed by the pre-routing handler (the headers are in) or,
// for a request with a body, re-armed there and disarmed once the body is read; a
// reaper thread answers a connection past its deadline with 408 (JSON error in OpenAI's shape)
// and shuts the socket down, so httplib's blocked read returns and the thread is freed.
//
// A body must keep a minimum rate (k_min_body_rate), not a deadline stretched by the length it
// claims: its deadline starts at the timeout from its headers, and each part read moves it on by
// the time that part is worth at the minimum rate, never more than the timeout ahead of now. A
// body sent at the minimum rate or faster never expires; one that trickles (a byte every few
// seconds) is closed one timeout after its headers, whatever Content-Length it named.
//
// httplib does not hand the accepted socket to its task queue, so on_accept() (the accept
// thread, just before the connection is queued) finds it: the connected TCP socket on the
// server's port whose inode no tracked connection has. Cost: one scan of /proc/self/fd per
// accepted connection (about a microsecond per open descriptor).
//
// Threads: on_accept() on httplib's accept thread; begin()/end() and arm()/disarm() on the
// connection's thread (the current connection is thread-local); the reaper on its own thread.
// All state behind one mutex; the reaper writes and shuts down under it, so a disarm racing it
// either wins (nothing is sent) or finds the socket already shut.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "http/connection_gate.h"

namespace httplib {
struct Response;
}

namespace sf {

/** One tracked connection: its descriptor and the socket's inode (descriptors are reused). */
struct tracked_connection {
    int fd      = -1;
    ino_t inode = 0;
};

class header_deadline {
  public:
    /**
     * `port`: the HTTP server's port (sockets on other ports are never touched); `timeout`:
     * how long a request line and its headers may take to arrive (> 0); `stats`: where the
     * 408s are counted (header_timeouts).
     */
    header_deadline(int port, std::chrono::milliseconds timeout,
                    std::shared_ptr<connection_stats> stats);

    /** The slowest a request body may arrive, on average, in bytes per second. */
    static constexpr size_t k_min_body_rate = 64 * 1024;
    ~header_deadline();
    header_deadline(const header_deadline &)            = delete;
    header_deadline &operator=(const header_deadline &) = delete;

    /** Accept thread: the connection just accepted (fd -1 when it cannot be told). */
    tracked_connection on_accept();
    /** Connection thread: this thread now serves `c`; its first request's deadline starts. */
    void begin(tracked_connection c);
    /** Connection thread: the connection is closed (its descriptor may be reused). */
    void end();
    /** Stops tracking `c` (a connection that was never served: the queue refused it). */
    void forget(const tracked_connection &c);
    /** Connection thread: a new request is awaited now (after a response). */
    void arm();
    /** Connection thread: the request's headers are in (and it has no body). */
    void disarm();

    /**
     * Connection thread, the headers are in: a body is still to come. Its deadline is the
     * timeout from now, moved on only as the body arrives (body_progress).
     */
    static void body_expected();
    /**
     * Connection thread: `n` more bytes of the body were read. The deadline moves on by
     * n / k_min_body_rate seconds, at most to the timeout from now.
     */
    static void body_progress(size_t n);
    /**
     * Connection thread (post-routing): when `res` streams its body (a content provider, e.g.
     * SSE), arms the deadline for the next request only once that body is written (in the
     * provider's releaser), not when httplib logs the response before it: a stream longer than
     * the timeout was cut with a 408 (bench endurance, a 38K-token prefill). Other responses:
     * nothing (the logger arms).
     */
    static void after_streamed_body(httplib::Response &res);
    /** Connection thread: the body has been read (route_util's read_body, or a handler). */
    static void body_read();

  private:
    struct state {
        tracked_connection c;
        bool armed = false;
        std::chrono::steady_clock::time_point deadline;
    };
    void arm_for(std::chrono::milliseconds allowance);
    void credit(size_t n);
    void reap_loop();
    void expire(const tracked_connection &c);

    const int port_;
    const std::chrono::milliseconds timeout_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::map<int, state> live_;  // by descriptor
    std::shared_ptr<connection_stats> stats_;
    std::thread reaper_;
};

}  // namespace sf
