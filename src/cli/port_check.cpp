#include "cli/port_check.h"

#include <cerrno>
#include <cstring>

#include "launch/launch_server.h"
#include "util/port_probe.h"

namespace sf {

std::string check_listen_address(const std::string &host, int port) {
    const std::string where = host + ":" + std::to_string(port);
    std::string why;
    const int err = tcp_port_probe(host, port, why);
    if (err < 0) return "cannot listen on " + where + ": " + why;
    if (err == 0) return "";
    if (err != EADDRINUSE) return "cannot listen on " + where + ": " + std::strerror(err);
    const auto probe = launch::probe_server(host == "0.0.0.0" ? "127.0.0.1" : host, port);
    std::string who  = probe.up && (probe.health_status == 200 || probe.health_status == 503)
                           ? "another superfluid server answers there (`superfluid ps --port " +
                                std::to_string(port) + "` shows it)"
                           : "another process holds it";
    return "cannot listen on " + where + ": port " + std::to_string(port) + " is in use; " + who +
           ". Stop it, or pick another --port";
}

}  // namespace sf
