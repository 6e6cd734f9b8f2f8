// Whether a TCP port can be bound, asked before a server that turns on SO_REUSEPORT (gRPC)
// listens: with it, a second process on the same port shares it silently instead of failing.
//
// Threads: stateless; any thread.
#pragma once

#include <string>

namespace sf {

/**
 * Whether `host`:`port` (a numeric IPv4/IPv6 address or a name; "0.0.0.0" for every
 * interface) can be bound and listened on now, with SO_REUSEADDR as servers set it and
 * without SO_REUSEPORT. 0 when it can; else the errno of the failure (EADDRINUSE: another
 * process holds it), or -1 when `host` does not resolve, with `error` saying so (e.g.
 * "port 8455 on 0.0.0.0 is in use (Address already in use)"). Nothing stays bound.
 */
int tcp_port_probe(const std::string &host, int port, std::string &error);

/** tcp_port_probe() == 0. */
inline bool tcp_port_free(const std::string &host, int port, std::string &error) {
    return tcp_port_probe(host, port, error) == 0;
}

}  // namespace sf
