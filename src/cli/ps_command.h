// `superfluid ps`: what a running server is doing (GET /api/ps), as a table.
#pragma once

#include <string>

namespace sf {

/** Prints the loaded model, its worker and the running sessions of the server at host:port. */
int run_ps(const std::string &host, int port);

}  // namespace sf
