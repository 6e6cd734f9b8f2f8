// The head's event-driven HTTP server (http/event_server.h) with its router, over raw sockets:
// stalled and idle connections hold no thread, keep-alive, chunked streams, the 408/400/413
// answers and the 503 beyond --http-threads requests.
#include "http/event_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family      = AF_INET;
    a.sin_port        = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void send_text(int fd, const std::string &s) {
    ASSERT_EQ(send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
}

/** Reads until `done(text)` holds, the peer closes, or `limit` passes. */
template <class Done>
std::string read_until(int fd, Done done, std::chrono::milliseconds limit = 5000ms) {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done(out)) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            end - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
        char buf[4096];
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

std::string read_to_close(int fd, std::chrono::milliseconds limit = 5000ms) {
    return read_until(
        fd, [](const std::string &) { return false; }, limit);
}

/** A whole response with a Content-Length body, or a chunked one up to its last chunk. */
bool response_complete(const std::string &s) {
    const size_t head = s.find("\r\n\r\n");
    if (head == std::string::npos) return false;
    const size_t cl = s.find("Content-Length: ");
    if (cl != std::string::npos && cl < head)
        return s.size() >= head + 4 + std::stoul(s.substr(cl + 16));
    return s.find("0\r\n\r\n", head) != std::string::npos;
}

struct test_server {
    sf::http_router router;
    std::shared_ptr<sf::connection_stats> stats = std::make_shared<sf::connection_stats>();
    std::unique_ptr<sf::event_server> server;
    std::thread runner;
    std::atomic<bool> release{false};  // the /hold route returns once set

    explicit test_server(sf::event_server_options o = {}) {
        router.Get("/ok", [](const httplib::Request &, httplib::Response &res) {
            res.set_content("fine", "text/plain");
        });
        router.Post("/echo", [](const httplib::Request &req, httplib::Response &res) {
            res.set_content(req.body, "text/plain");
        });
        router.Get("/hold", [this](const httplib::Request &, httplib::Response &res) {
            while (!release) std::this_thread::sleep_for(5ms);
            res.set_content("held", "text/plain");
        });
        router.Get("/stream", [](const httplib::Request &, httplib::Response &res) {
            auto n = std::make_shared<int>(0);
            res.set_chunked_content_provider(
                "text/event-stream", [n](size_t, httplib::DataSink &sink) {
                    if (*n == 3) {
                        sink.done();
                        return true;
                    }
                    const std::string part = "data: " + std::to_string((*n)++) + "\n\n";
                    return sink.write(part.data(), part.size());
                });
        });
        router.set_error_handler([](const httplib::Request &, httplib::Response &res) {
            res.set_content("error " + std::to_string(res.status), "text/plain");
        });
        o.host = "127.0.0.1";
        o.port = 0;
        server = std::make_unique<sf::event_server>(router, o, stats);
        EXPECT_TRUE(server->bind());
        runner = std::thread([this] { server->run(); });
    }
    ~test_server() {
        release = true;
        server->stop();
        runner.join();
    }
    int port() const { return server->port(); }
};

/** One request on a fresh connection; the whole answer. */
std::string request(int port, const std::string &text) {
    int fd = connect_to(port);
    send_text(fd, text);
    std::string out = read_until(fd, response_complete);
    close(fd);
    return out;
}

TEST(event_server, stalled_and_idle_connections_hold_no_thread) {
    sf::event_server_options o;
    o.max_requests = 4;  // four request threads: 300 stalled connections would hold them all
    test_server s(o);
    std::vector<int> fds;
    for (int i = 0; i < 300; ++i) {  // a request line and one header, then nothing
        fds.push_back(connect_to(s.port()));
        send_text(fds.back(), "POST /echo HTTP/1.1\r\nHost: x\r\n");
    }
    for (int i = 0; i < 300; ++i) fds.push_back(connect_to(s.port()));  // nothing at all
    for (int fd : fds) ASSERT_GE(fd, 0);
    const auto t0   = std::chrono::steady_clock::now();
    std::string out = request(s.port(), "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
    EXPECT_EQ(out.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << out;
    EXPECT_NE(out.find("fine"), std::string::npos);
    // The request thread counts itself out just after its last write reached the client.
    for (int i = 0; i < 200 && s.stats->active.load() != 0; ++i) std::this_thread::sleep_for(5ms);
    EXPECT_EQ(s.stats->active.load(), 0u);
    EXPECT_GE(s.stats->open.load(), 600u);
    for (int fd : fds) close(fd);
}

TEST(event_server, keep_alive_serves_several_requests_on_one_connection) {
    test_server s;
    int fd = connect_to(s.port());
    for (int i = 0; i < 3; ++i) {
        send_text(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
        std::string out = read_until(fd, response_complete);
        EXPECT_EQ(out.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << out;
        EXPECT_NE(out.find("Connection: keep-alive"), std::string::npos) << out;
        EXPECT_EQ(out.substr(out.size() - 5), "hello");
    }
    close(fd);
    EXPECT_EQ(s.stats->accepted.load(), 1u);
}

TEST(event_server, a_chunked_stream_is_written_as_the_provider_writes) {
    test_server s;
    std::string out = request(s.port(), "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(out.find("Transfer-Encoding: chunked"), std::string::npos) << out;
    EXPECT_NE(out.find("9\r\ndata: 0\n\n\r\n9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n"),
              std::string::npos)
        << out;
}

TEST(event_server, slow_headers_and_slow_bodies_get_408_at_the_header_timeout) {
    sf::event_server_options o;
    o.header_timeout = 500ms;
    test_server s(o);
    int slow_head = connect_to(s.port());
    send_text(slow_head, "GET /ok HTTP/1.1\r\n");
    int slow_body = connect_to(s.port());
    send_text(slow_body, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab");
    const auto t0 = std::chrono::steady_clock::now();
    for (int fd : {slow_head, slow_body}) {
        std::string out = read_to_close(fd);
        EXPECT_EQ(out.rfind("HTTP/1.1 408 ", 0), 0u) << out;
        EXPECT_NE(out.find("error 408"), std::string::npos) << out;
        close(fd);
    }
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(took, 400ms);
    EXPECT_LT(took, 3s);
    EXPECT_EQ(s.stats->header_timeouts.load(), 2u);
}

TEST(event_server, bad_heads_and_large_bodies_are_refused_with_their_status) {
    sf::event_server_options o;
    o.max_body_bytes = 1000;
    test_server s(o);
    std::string many = "GET /ok HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 150; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
    EXPECT_EQ(request(s.port(), many + "\r\n").rfind("HTTP/1.1 400 ", 0), 0u);
    EXPECT_EQ(
        request(s.port(), "GET /ok HTTP/1.1\r\nX-Big: " + std::string(10000, 'a') + "\r\n\r\n")
            .rfind("HTTP/1.1 400 ", 0),
        0u);
    EXPECT_EQ(request(s.port(), "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
                  .rfind("HTTP/1.1 413 ", 0),
              0u);
    EXPECT_EQ(
        request(s.port(), "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 404 ", 0),
        0u);
    EXPECT_EQ(request(s.port(), "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 200 ", 0),
              0u);
}

TEST(event_server, beyond_max_requests_a_request_gets_503_at_once) {
    sf::event_server_options o;
    o.max_requests = 2;
    test_server s(o);
    std::vector<int> held;
    for (int i = 0; i < 2; ++i) {
        held.push_back(connect_to(s.port()));
        send_text(held.back(), "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    for (int i = 0; i < 200 && s.stats->active.load() < 2; ++i) std::this_thread::sleep_for(5ms);
    ASSERT_EQ(s.stats->active.load(), 2u);
    EXPECT_EQ(request(s.port(), "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 503 ", 0),
              0u);
    EXPECT_EQ(s.stats->refused.load(), 1u);
    s.release = true;
    for (int fd : held) {
        EXPECT_NE(read_until(fd, response_complete).find("held"), std::string::npos);
        close(fd);
    }
    EXPECT_EQ(request(s.port(), "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 200 ", 0),
              0u);
}

}  // namespace
