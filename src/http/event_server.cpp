#include "http/event_server.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "util/log.h"

namespace sf {

namespace net   = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp       = net::ip::tcp;
using std::chrono::steady_clock;

namespace {

// httplib's limits, kept: at most 100 header lines of 8 KiB (the error body says so).
constexpr size_t k_max_header_lines = 100;
constexpr size_t k_max_header_line  = 8192;
constexpr size_t k_header_bytes     = 64 * 1024;  // the whole head (line and headers)
constexpr size_t k_read_chunk       = 16 * 1024;
// After an error answer the rest of what the client sends is read and dropped for this long,
// so closing with unread input (a TCP reset) does not destroy the answer before it is read.
constexpr auto k_linger = std::chrono::seconds(2);

class connection;

}  // namespace

/** What the I/O thread and the request threads share (see the header). */
struct event_server_state {
    const http_router &router;
    event_server_options opts;
    std::shared_ptr<connection_stats> stats;
    net::io_context io{1};
    tcp::acceptor acceptor{io};
    net::steady_timer accept_retry{io};
    request_threads threads;
    std::atomic<bool> stopping{false};
    std::mutex mu;                          // guards `live`
    std::unordered_set<connection *> live;  // every open connection (stop() reaches them)

    event_server_state(const http_router &r, event_server_options o,
                       std::shared_ptr<connection_stats> s)
        : router(r), opts(std::move(o)), stats(std::move(s)) {}
};

namespace {

/** Writes all of `data` to a socket; false when the peer is gone or reads nothing for `timeout`. */
bool send_all(int fd, const char *data, size_t len, std::chrono::milliseconds timeout,
              const std::atomic<bool> &stopping) {
    while (len > 0) {
        const ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            data += n;
            len -= static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || stopping) return false;
        pollfd p{fd, POLLOUT, 0};
        const int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
        if (r == 0) return false;  // the client read nothing for the whole timeout
        if (r < 0 && errno != EINTR) return false;
    }
    return true;
}

/** True when the peer closed or reset the connection (as httplib's is_socket_alive reads it). */
bool peer_gone(int fd) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return true;
    char c;
    return (p.revents & POLLIN) && ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/**
 * One client connection. The I/O thread reads each request; a request thread handles it and
 * writes the answer, then posts the connection back (in_request_ tells who owns it).
 */
class connection : public std::enable_shared_from_this<connection> {
  public:
    connection(event_server_state &st, tcp::socket s)
        : st_(st), sock_(std::move(s)), timer_(st.io), fd_(sock_.native_handle()) {
        beast::error_code ec;
        auto remote = sock_.remote_endpoint(ec);
        if (!ec) {
            remote_addr_ = remote.address().to_string();
            remote_port_ = remote.port();
        }
        auto local = sock_.local_endpoint(ec);
        if (!ec) {
            local_addr_ = local.address().to_string();
            local_port_ = local.port();
        }
        std::lock_guard lk(st_.mu);
        st_.live.insert(this);
        ++st_.stats->open;
        ++st_.stats->accepted;
    }
    ~connection() {
        std::lock_guard lk(st_.mu);
        st_.live.erase(this);
        --st_.stats->open;
    }

    void start() { await_request(); }

    /** I/O thread, at stop(): a connection being read stops reading (and closes). */
    void cancel_reading() {
        if (in_request_) return;
        beast::error_code ec;
        sock_.cancel(ec);
        timer_.cancel();
    }
    /** Any thread, under st_.mu: the socket is shut down (a request thread's writes fail). */
    void force_shutdown() const {
        if (!closed_) ::shutdown(fd_, SHUT_RDWR);
    }

  private:
    // --- the I/O thread's part: reading a request --------------------------------------
    void await_request() {
        if (st_.stopping) return close();
        parser_.reset();
        if (buf_.size() > 0) return read_header();  // the next request is already here
        // An idle keep-alive connection: nothing is owed to it, it closes quietly.
        arm(steady_clock::now() + st_.opts.idle_timeout);
        sock_.async_read_some(buf_.prepare(k_read_chunk),
                              [self = shared_from_this()](beast::error_code ec, size_t n) {
                                  if (ec || n == 0) return self->close();
                                  self->buf_.commit(n);
                                  self->read_header();
                              });
    }

    void read_header() {
        parser_.emplace();
        parser_->header_limit(static_cast<uint32_t>(k_header_bytes));
        parser_->body_limit(st_.opts.max_body_bytes);
        arm(steady_clock::now() + st_.opts.header_timeout);
        bhttp::async_read_header(
            sock_, buf_, *parser_,
            [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
    }

    void on_header(beast::error_code ec) {
        if (ec) return read_failed(ec);
        const auto &msg = parser_->get();
        size_t lines    = 0;
        for (const auto &f : msg) {
            if (++lines > k_max_header_lines ||
                f.name_string().size() + f.value().size() + 2 > k_max_header_line)
                return answer_error(400);
        }
        if (parser_->is_done()) return dispatch();
        if (beast::iequals(msg[bhttp::field::expect], "100-continue")) {
            static const char k_continue[] = "HTTP/1.1 100 Continue\r\n\r\n";
            (void)!::send(fd_, k_continue, sizeof k_continue - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        body_deadline_ = steady_clock::now() + st_.opts.header_timeout;
        read_body();
    }

    void read_body() {
        arm(body_deadline_);
        bhttp::async_read_some(
            sock_, buf_, *parser_,
            [self = shared_from_this()](beast::error_code ec, size_t n) { self->on_body(ec, n); });
    }

    void on_body(beast::error_code ec, size_t n) {
        if (ec) return read_failed(ec);
        // A part read is worth n / k_min_body_rate seconds more, never past timeout from now.
        using namespace std::chrono;
        const auto worth = duration_cast<steady_clock::duration>(
            duration<double>(static_cast<double>(n) / static_cast<double>(k_min_body_rate)));
        body_deadline_ =
            std::min(body_deadline_ + worth, steady_clock::now() + st_.opts.header_timeout);
        if (parser_->is_done()) return dispatch();
        read_body();
    }

    void read_failed(beast::error_code ec) {
        if (timed_out_) {
            ++st_.stats->header_timeouts;
            SF_LOG_WARN("http",
                        "a request did not arrive in time (its headers within %lld ms, its body "
                        "at %zu bytes/s or faster): closed (408)",
                        static_cast<long long>(st_.opts.header_timeout.count()), k_min_body_rate);
            return answer_error(408);
        }
        if (ec == bhttp::error::body_limit) return answer_error(413);
        if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
            ec == net::error::eof || ec == net::error::operation_aborted ||
            ec == net::error::connection_reset)
            return close();  // the client left
        static const auto &parse_errors =
            bhttp::make_error_code(bhttp::error::bad_target).category();
        if (ec.category() == parse_errors) return answer_error(400);  // header_limit, bad line, …
        close();
    }

    // --- handing a request to a request thread -------------------------------------------
    httplib::Request make_request() {
        auto &msg = parser_->get();
        httplib::Request req;
        req.method     = std::string(msg.method_string());
        req.target     = std::string(msg.target());
        req.version    = msg.version() == 10 ? "HTTP/1.0" : "HTTP/1.1";
        const size_t q = req.target.find('?');
        req.path       = httplib::decode_path_component(req.target.substr(0, q));
        if (q != std::string::npos)
            httplib::detail::parse_query_text(req.target.substr(q + 1), req.params);
        for (const auto &f : msg)
            req.headers.emplace(std::string(f.name_string()), std::string(f.value()));
        if (parser_->is_done()) req.body = std::move(msg.body());
        req.remote_addr          = remote_addr_;
        req.remote_port          = remote_port_;
        req.local_addr           = local_addr_;
        req.local_port           = local_port_;
        const int fd             = fd_;
        auto &stopping           = st_.stopping;
        req.is_connection_closed = [fd, &stopping] { return stopping || peer_gone(fd); };
        return req;
    }

    void dispatch() {
        disarm();
        auto req    = std::make_shared<httplib::Request>(make_request());
        keep_alive_ = parser_->get().keep_alive();
        if (st_.stats->active.fetch_add(1) >= st_.opts.max_requests) {
            --st_.stats->active;
            ++st_.stats->refused;
            httplib::Response res;
            st_.router.refuse(*req, res);
            return answer_now(*req, res);
        }
        in_request_ = true;
        auto self   = shared_from_this();
        if (!st_.threads.run([self, req] { self->serve(*req); })) {
            in_request_ = false;
            --st_.stats->active;
            ++st_.stats->dropped;
            close();
        }
    }

    // --- a request thread's part: handling and answering ----------------------------------
    void serve(httplib::Request &req) {
        bool keep = false;
        {
            httplib::Response res;
            st_.router.handle(req, res);
            keep = keep_alive_ && res.status != 503 && res.status != 408 &&
                   res.get_header_value("Connection") != "close";
            keep = write_response(req, res, keep) && keep;
        }  // the response's releaser runs here, on this thread, as under httplib
        --st_.stats->active;
        auto self = shared_from_this();
        net::post(st_.io, [self, keep] {
            self->in_request_ = false;
            keep ? self->await_request() : self->close();
        });
    }

    /** Head and body of `res`; false when the client is gone or the write timed out. */
    bool write_response(const httplib::Request &req, httplib::Response &res, bool keep) {
        const bool head    = req.method == "HEAD";
        const bool stream  = static_cast<bool>(res.content_provider_);
        const bool chunked = stream && req.version == "HTTP/1.1";
        const std::string header =
            serialize_head(res, keep && (!stream || chunked), chunked, stream);
        const auto t = st_.opts.write_timeout;
        if (!stream || head) {
            std::string out = header;
            if (!head) out += res.body;
            return send_all(fd_, out.data(), out.size(), t, st_.stopping);
        }
        if (!send_all(fd_, header.data(), header.size(), t, st_.stopping)) return false;
        bool ok = true, done = false;
        size_t offset = 0;
        httplib::DataSink sink;
        sink.write = [&](const char *d, size_t n) {
            if (!ok || n == 0) return ok;
            std::string part;
            if (chunked) {
                part = beast::buffers_to_string(bhttp::make_chunk(net::buffer(d, n)));
                ok   = send_all(fd_, part.data(), part.size(), t, st_.stopping);
            } else {
                ok = send_all(fd_, d, n, t, st_.stopping);
            }
            offset += n;
            return ok;
        };
        sink.is_writable = [&] { return ok && !st_.stopping && !peer_gone(fd_); };
        sink.done        = [&] {
            if (done) return;
            done = true;
            if (!ok || !chunked) return;
            const std::string last = beast::buffers_to_string(bhttp::make_chunk_last());
            ok                     = send_all(fd_, last.data(), last.size(), t, st_.stopping);
        };
        while (ok && !done)
            if (!res.content_provider_(offset, 0, sink)) ok = false;
        res.content_provider_success_ = ok && done;
        return ok && done && chunked;  // a stream without chunks ends with the connection
    }

    static std::string serialize_head(const httplib::Response &res, bool keep, bool chunked,
                                      bool stream) {
        bhttp::response_header<> h;
        h.version(11);
        h.result(static_cast<unsigned>(res.status));
        h.reason(res.reason.empty() ? httplib::status_message(res.status) : res.reason);
        for (const auto &[k, v] : res.headers) h.insert(k, v);
        if (chunked)
            h.set(bhttp::field::transfer_encoding, "chunked");
        else if (!stream)
            h.set(bhttp::field::content_length, std::to_string(res.body.size()));
        h.set(bhttp::field::connection, keep ? "keep-alive" : "close");
        std::ostringstream os;
        os << h;
        return os.str();
    }

    // --- answers the I/O thread writes itself (small, at once) ----------------------------
    void answer_error(int status) {
        disarm();
        httplib::Request req;
        if (parser_) {  // as much of the request as was read: its API decides the error shape
            const auto &msg = parser_->get();
            req.method      = std::string(msg.method_string());
            req.path        = std::string(msg.target().substr(0, msg.target().find('?')));
            for (const auto &f : msg)
                req.headers.emplace(std::string(f.name_string()), std::string(f.value()));
        }
        httplib::Response res;
        res.status = status;
        st_.router.fill_error(req, res);
        answer_now(req, res);
    }

    void answer_now(const httplib::Request &req, httplib::Response &res) {
        std::string out = serialize_head(res, false, false, false);
        if (req.method != "HEAD") out += res.body;
        (void)!::send(fd_, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        linger_close();
    }

    /** Stops sending, reads and drops what still comes for k_linger, then closes. */
    void linger_close() {
        beast::error_code ec;
        sock_.shutdown(tcp::socket::shutdown_send, ec);
        if (ec) return close();
        arm(steady_clock::now() + k_linger);
        drain();
    }
    void drain() {
        sock_.async_read_some(buf_.prepare(k_read_chunk),
                              [self = shared_from_this()](beast::error_code ec, size_t) {
                                  if (ec) return self->close();
                                  self->buf_.clear();
                                  self->drain();
                              });
    }

    void close() {
        disarm();
        {
            std::lock_guard lk(st_.mu);
            if (closed_) return;
            closed_ = true;
        }
        beast::error_code ec;
        sock_.shutdown(tcp::socket::shutdown_both, ec);
        sock_.close(ec);
    }

    // --- the read deadline ----------------------------------------------------------------
    void arm(steady_clock::time_point at) {
        timed_out_ = false;
        ++generation_;
        timer_.expires_at(at);
        timer_.async_wait([self = shared_from_this(), g = generation_](beast::error_code ec) {
            if (ec || g != self->generation_) return;
            self->timed_out_ = true;
            beast::error_code ignored;
            self->sock_.cancel(ignored);
        });
    }
    void disarm() {
        ++generation_;
        timer_.cancel();
    }

    event_server_state &st_;
    tcp::socket sock_;
    net::steady_timer timer_;
    const int fd_;
    beast::flat_buffer buf_;
    std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
    steady_clock::time_point body_deadline_;
    uint64_t generation_ = 0;
    bool timed_out_      = false;
    bool keep_alive_     = false;
    bool in_request_     = false;  // a request thread owns the connection (I/O thread's view)
    bool closed_         = false;  // guarded by st_.mu
    std::string remote_addr_, local_addr_;
    int remote_port_ = -1, local_port_ = -1;
};

void accept_next(event_server_state &st) {
    st.acceptor.async_accept([&st](beast::error_code ec, tcp::socket s) {
        if (ec == net::error::operation_aborted || !st.acceptor.is_open() || st.stopping) return;
        if (ec) {
            // Out of descriptors (EMFILE) or memory: the connection waits in the backlog; try
            // again shortly instead of spinning.
            ++st.stats->dropped;
            SF_LOG_WARN("http", "cannot accept a connection: %s", ec.message().c_str());
            st.accept_retry.expires_after(std::chrono::milliseconds(100));
            st.accept_retry.async_wait([&st](beast::error_code e) {
                if (!e) accept_next(st);
            });
            return;
        }
        std::make_shared<connection>(st, std::move(s))->start();
        accept_next(st);
    });
}

/** Raises the soft descriptor limit to the hard one: every idle connection holds one. */
void raise_fd_limit() {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) return;
    rl.rlim_cur = rl.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &rl);
}

}  // namespace

event_server::event_server(const http_router &router, event_server_options opts,
                           std::shared_ptr<connection_stats> stats)
    : st_(std::make_unique<event_server_state>(router, std::move(opts), std::move(stats))) {}

event_server::~event_server() {
    stop();
}

bool event_server::bind() {
    raise_fd_limit();
    beast::error_code ec;
    tcp::resolver resolver(st_->io);
    auto results = resolver.resolve(st_->opts.host, std::to_string(st_->opts.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) return false;
    const tcp::endpoint ep = results.begin()->endpoint();
    auto &a                = st_->acceptor;
    a.open(ep.protocol(), ec);
    if (ec) return false;
    a.set_option(net::socket_base::reuse_address(true), ec);
    a.bind(ep, ec);
    if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
        a.close(ec);
        return false;
    }
    return true;
}

int event_server::port() const {
    beast::error_code ec;
    auto ep = st_->acceptor.local_endpoint(ec);
    return ec ? 0 : ep.port();
}

void event_server::run() {
    accept_next(*st_);
    st_->io.run();
    // Requests still being answered finish (their sessions were ended by the caller); a client
    // that reads nothing is cut after a grace period.
    std::thread grace([st = st_.get()] {
        for (int i = 0; i < 50 && st->stats->active > 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::lock_guard lk(st->mu);
        for (auto *c : st->live) c->force_shutdown();
    });
    st_->threads.shutdown();
    grace.join();
    // The request threads posted their connections back: those handlers run now and close
    // them (stopping is set), so no connection outlives the state it unregisters from.
    st_->io.restart();
    st_->io.run();
}

void event_server::stop() {
    if (!st_ || st_->stopping.exchange(true)) return;
    // On the I/O thread: no new connections, connections being read close; run() returns
    // once the I/O thread has nothing left to do.
    net::post(st_->io, [st = st_.get()] {
        beast::error_code ec;
        st->acceptor.close(ec);
        st->accept_retry.cancel();
        std::lock_guard lk(st->mu);
        for (auto *c : st->live) c->cancel_reading();
    });
}

}  // namespace sf
