#include "util/port_probe.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sf {

int tcp_port_probe(const std::string &host, int port, std::string &error) {
    addrinfo hints{};
    hints.ai_family           = AF_UNSPEC;
    hints.ai_socktype         = SOCK_STREAM;
    hints.ai_flags            = AI_PASSIVE;
    addrinfo *res             = nullptr;
    const std::string service = std::to_string(port);
    const int rc =
        getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
    if (rc != 0) {
        error = "cannot resolve " + host + ": " + gai_strerror(rc);
        return -1;
    }
    int failed = 0;
    for (addrinfo *a = res; a && failed == 0; a = a->ai_next) {
        const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        // SO_REUSEADDR as every server sets it (a TIME_WAIT port binds); not SO_REUSEPORT.
        const int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 1) != 0) {
            failed = errno;
            error  = "port " + service + " on " + (host.empty() ? "*" : host) +
                    (failed == EADDRINUSE ? " is in use (" : " cannot be bound (") +
                    std::strerror(failed) + ")";
        }
        close(fd);
    }
    freeaddrinfo(res);
    return failed;
}

}  // namespace sf
