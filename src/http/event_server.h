// The head's HTTP/1.1 server, event-driven (Boost.Beast over Asio, from Debian's Boost 1.74):
// one I/O thread accepts connections and reads every request (line, headers, body) without a
// thread of its own, so an idle keep-alive connection or a stalled, slow client costs a socket
// and a few KB of buffer, never a thread. A request read whole is handed to a request thread
// (http_router::handle), which writes the response itself (blocking writes with a timeout;
// chunked for streams, the route's DataSink) and then hands the connection back to the I/O
// thread for its next keep-alive request. At most `max_requests` requests are handled at once
// (`--http-threads`); one beyond is answered 503 + Retry-After at once, in its API's shape.
//
// Limits while reading: the first byte of a request may take `idle_timeout` (then the
// connection closes silently: an idle keep-alive); from it, the line and headers must arrive
// within `header_timeout`, and a body must keep `k_min_body_rate` (it gets the timeout from its
// headers, each part read moves that deadline on by the time the part is worth at the minimum
// rate, never more than the timeout ahead of now): else 408 in OpenAI's shape and the socket is
// closed. Headers: at most 100 lines of 8 KiB (else 400); a body over `max_body_bytes`: 413.
//
// Threads: the I/O thread owns every connection while a request is read; a request thread
// owns it from dispatch until it posts the connection back (or closes it). stop() may be called
// from any thread. Counters are atomics (connection_stats, read by /metrics).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "http/connection_stats.h"
#include "http/router.h"

namespace sf {

struct event_server_state;

struct event_server_options {
    std::string host      = "127.0.0.1";
    int port              = 8453;
    size_t max_body_bytes = 32u << 20;
    size_t max_requests   = 256;  // requests handled at once (request threads)
    std::chrono::milliseconds header_timeout{30000};
    std::chrono::milliseconds idle_timeout{60000};    // keep-alive: wait for the next request
    std::chrono::milliseconds write_timeout{600000};  // a client that reads nothing this long
};

/** A body must arrive at least this fast (bytes/s) once its headers are in. */
inline constexpr size_t k_min_body_rate = 64 * 1024;

class event_server {
  public:
    event_server(const http_router &router, event_server_options opts,
                 std::shared_ptr<connection_stats> stats);
    ~event_server();

    /** Binds host:port (SO_REUSEADDR, never SO_REUSEPORT). False when it cannot. */
    bool bind();
    /** The bound port (the one the kernel chose for port 0); 0 before bind(). */
    int port() const;
    /** Serves until stop(): returns after the open requests were told their clients left. */
    void run();
    /** Stops accepting, shuts every open connection down and makes run() return. */
    void stop();

  private:
    std::unique_ptr<event_server_state> st_;
};

}  // namespace sf
