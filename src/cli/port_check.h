// Whether `serve` can listen on its address, asked before the model is pulled or loaded, so a
// port another process holds (another `superfluid serve` included) is refused at once with
// a message naming the port. The HTTP server's own bind (SO_REUSEADDR, no SO_REUSEPORT)
// refuses it too when the port is taken in between.
#pragma once

#include <string>

namespace sf {

/**
 * Binds host:port once (SO_REUSEADDR, as the server does) and lets it go. "" when it can be
 * bound; otherwise the message to show, e.g. "cannot listen on 127.0.0.1:8453: the port is in
 * use by another process (a superfluid server answers there) …".
 */
std::string check_listen_address(const std::string &host, int port);

}  // namespace sf
