// The head's routing table: which handler answers a method and path, and the hooks every
// request passes (pre-routing checks, the error body of a failure, the exception guard, the
// post-routing headers). Requests and responses are cpp-httplib's plain structs
// (httplib::Request/Response/DataSink), so the route files are written as for httplib, but no
// httplib server runs: http/event_server.h reads the requests and writes the responses.
// Semantics follow httplib's Server::routing: HEAD is answered by the GET route (the body is
// dropped when written), a regex pattern must match the whole path (req.matches holds its
// groups), an unmatched request is a 404, an unknown method a 400.
// Threads: routes are registered before the server starts (one thread); handle() and refuse()
// are then called concurrently, from the request threads and the I/O thread, and read only.
#pragma once

#include <cpp-httplib/httplib.h>

#include <exception>
#include <functional>
#include <regex>
#include <string>
#include <vector>

namespace sf {

class http_router {
  public:
    enum class outcome { HANDLED, UNHANDLED };
    using handler        = std::function<void(const httplib::Request &, httplib::Response &)>;
    using reader_handler = std::function<void(const httplib::Request &, httplib::Response &,
                                              const httplib::ContentReader &)>;
    using hook           = std::function<outcome(const httplib::Request &, httplib::Response &)>;
    using after_hook     = std::function<void(const httplib::Request &, httplib::Response &)>;
    using exception_hook =
        std::function<void(const httplib::Request &, httplib::Response &, std::exception_ptr)>;

    /** Routes by method; `pattern` is an ECMAScript regex that must match the whole path. */
    http_router &Get(const std::string &pattern, handler h);
    http_router &Post(const std::string &pattern, handler h);
    /** A POST whose handler reads the body through a ContentReader (given it whole, at once). */
    http_router &Post(const std::string &pattern, reader_handler h);
    http_router &Delete(const std::string &pattern, handler h);
    http_router &Options(const std::string &pattern, handler h);

    /** Runs before routing; HANDLED: the response it wrote is the answer. */
    void set_pre_routing_handler(hook h) { pre_ = std::move(h); }
    /** Fills the body of a response with status >= 400 that a handler left empty (404, …). */
    void set_error_handler(after_hook h) { error_ = std::move(h); }
    /** A handler threw: writes the 500. */
    void set_exception_handler(exception_hook h) { exception_ = std::move(h); }
    /** Runs after every routed request (CORS headers). */
    void set_post_routing_handler(after_hook h) { post_ = std::move(h); }
    /**
     * Answers a request that cannot be served now (every request thread busy): 503 in the
     * caller's shape. Runs on the I/O thread: must not block.
     */
    void set_overload_handler(after_hook h) { overload_ = std::move(h); }

    /**
     * Routes one request with its body read (req.body): the response is in `res`. No route for
     * the path: 404; the path has routes for other methods only: 405 with an Allow header (the
     * catch-all OPTIONS route does not count); a method outside HTTP's usual seven: 501.
     */
    void handle(httplib::Request &req, httplib::Response &res) const;
    /** The overload answer for `req` (503 when no handler is set), then the error body. */
    void refuse(const httplib::Request &req, httplib::Response &res) const;
    /** The error handler's body for a failure found before routing (400, 408, 413, …). */
    void fill_error(const httplib::Request &req, httplib::Response &res) const;

  private:
    struct route {
        std::string method;
        std::regex pattern;
        handler plain;
        reader_handler with_reader;
    };
    http_router &add(std::string method, const std::string &pattern, handler h, reader_handler r);
    void dispatch(httplib::Request &req, httplib::Response &res) const;

    std::vector<route> routes_;
    hook pre_;
    after_hook error_, post_, overload_;
    exception_hook exception_;
};

}  // namespace sf
