#include "http/header_deadline.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

#include <cpp-httplib/httplib.h>

#include "util/log.h"

namespace sf {

namespace {

thread_local tracked_connection t_conn;           // the connection this thread serves
thread_local header_deadline *t_owner = nullptr;  // and the deadline that tracks it

// The local port of a TCP socket, or -1 for anything else (unix sockets, the unbound).
int local_port(int fd) {
    sockaddr_storage a{};
    socklen_t n = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&a), &n) != 0) return -1;
    if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in *>(&a)->sin_port);
    if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6 *>(&a)->sin6_port);
    return -1;
}

bool connected(int fd) {
    sockaddr_storage a{};
    socklen_t n = sizeof a;
    return getpeername(fd, reinterpret_cast<sockaddr *>(&a), &n) == 0;
}

ino_t socket_inode(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
    return st.st_ino;
}

}  // namespace

header_deadline::header_deadline(int port, std::chrono::milliseconds timeout,
                                 std::shared_ptr<connection_stats> stats)
    : port_(port), timeout_(timeout), stats_(std::move(stats)), reaper_([this] { reap_loop(); }) {}

header_deadline::~header_deadline() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    reaper_.join();
}

tracked_connection header_deadline::on_accept() {
    std::lock_guard lk(mu_);
    std::set<ino_t> known;
    for (const auto &[fd, s] : live_) known.insert(s.c.inode);
    tracked_connection best;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return best;
    while (const dirent *e = readdir(d)) {
        char *end     = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd == dirfd(d)) continue;
        const ino_t ino = socket_inode(static_cast<int>(fd));
        if (ino == 0 || known.count(ino) || local_port(static_cast<int>(fd)) != port_ ||
            !connected(static_cast<int>(fd)))
            continue;
        if (ino > best.inode) best = {static_cast<int>(fd), ino};  // the newest socket
    }
    closedir(d);
    if (best.fd >= 0)
        live_[best.fd] = {best, true, std::chrono::steady_clock::now() + timeout_};
    else
        SF_LOG_WARN("http", "cannot tell which socket was accepted: no header deadline for it");
    return best;
}

void header_deadline::begin(tracked_connection c) {
    t_conn  = c;
    t_owner = this;
}

void header_deadline::end() {
    forget(t_conn);
    t_conn  = {};
    t_owner = nullptr;
}

void header_deadline::forget(const tracked_connection &c) {
    std::lock_guard lk(mu_);
    auto it = live_.find(c.fd);
    if (it != live_.end() && it->second.c.inode == c.inode) live_.erase(it);
}

void header_deadline::arm() {
    arm_for(timeout_);
}

void header_deadline::arm_for(std::chrono::milliseconds allowance) {
    std::lock_guard lk(mu_);
    auto it = live_.find(t_conn.fd);
    if (it == live_.end() || it->second.c.inode != t_conn.inode) return;
    it->second.armed    = true;
    it->second.deadline = std::chrono::steady_clock::now() + allowance;
}

void header_deadline::body_expected() {
    if (t_owner) t_owner->arm();
}

void header_deadline::body_progress(size_t n) {
    if (t_owner && n > 0) t_owner->credit(n);
}

void header_deadline::credit(size_t n) {
    using namespace std::chrono;
    std::lock_guard lk(mu_);
    auto it = live_.find(t_conn.fd);
    if (it == live_.end() || it->second.c.inode != t_conn.inode || !it->second.armed) return;
    const auto worth = duration_cast<steady_clock::duration>(
        duration<double>(static_cast<double>(n) / static_cast<double>(k_min_body_rate)));
    it->second.deadline = std::min(it->second.deadline + worth, steady_clock::now() + timeout_);
}

void header_deadline::after_streamed_body(httplib::Response &res) {
    if (!res.content_provider_ || !t_owner) return;
    header_deadline *owner = t_owner;
    auto inner             = std::move(res.content_provider_resource_releaser_);
    // The releaser runs on this connection's thread when httplib is done with the response.
    res.content_provider_resource_releaser_ = [owner, inner = std::move(inner)](bool success) {
        if (inner) inner(success);
        if (t_owner == owner) owner->arm();
    };
}

void header_deadline::body_read() {
    if (t_owner) t_owner->disarm();
}

void header_deadline::disarm() {
    std::lock_guard lk(mu_);
    auto it = live_.find(t_conn.fd);
    if (it != live_.end() && it->second.c.inode == t_conn.inode) it->second.armed = false;
}

void header_deadline::expire(const tracked_connection &c) {
    // The descriptor still names the same socket (it may have been closed and reused).
    if (socket_inode(c.fd) != c.inode) return;
    static const std::string body =
        R"({"error":{"message":"the request (its headers or body) did not arrive in time",)"
        R"("type":"invalid_request_error","param":null,"code":"request_timeout"}})";
    const std::string resp =
        "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nConnection: "
        "close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    (void)!send(c.fd, resp.data(), resp.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    shutdown(c.fd, SHUT_RDWR);  // httplib's blocked read returns; it closes the socket
    ++stats_->header_timeouts;
    SF_LOG_WARN(
        "http",
        "a request did not arrive in time (its headers within %lld ms, its body at %zu bytes/s "
        "or faster): closed (408)",
        static_cast<long long>(timeout_.count()), k_min_body_rate);
}

void header_deadline::reap_loop() {
    std::unique_lock lk(mu_);
    while (!stop_) {
        cv_.wait_for(lk, std::chrono::milliseconds(200));
        const auto now = std::chrono::steady_clock::now();
        for (auto &[fd, s] : live_) {
            if (!s.armed || now < s.deadline) continue;
            s.armed = false;
            expire(s.c);
        }
    }
}

}  // namespace sf
