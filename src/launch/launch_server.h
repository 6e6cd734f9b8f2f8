// The server `superfluid launch` points agents at: found running (GET /health) or started in
// the background (`superfluid serve [MODEL] --host --port`, detached, log under the state
// dir) and waited for until /health answers 200. Blocking calls, on the launching thread.
#pragma once

#include <string>

namespace sf::launch {

/** What a server on host:port answered. */
struct server_probe {
    bool up           = false;  // something answered HTTP
    bool ready        = false;  // /health 200
    int health_status = 0;      // /health HTTP status (503 while a model loads)
    std::string model_id;       // first id of /v1/models
    int context_length = 0;
};

/** Asks host:port once (short timeouts). */
server_probe probe_server(const std::string &host, int port);

/**
 * Makes sure a ready server answers on host:port, starting `exe serve` (`exe`: the superfluid
 * executable) with `model` ("" = default) when none does. `state_dir` "" = the default.
 * Prints progress to stderr; false on failure (with the server log's tail printed).
 */
bool ensure_server(const std::string &exe, const std::string &host, int port,
                   const std::string &model, const std::string &state_dir, server_probe &out);

}  // namespace sf::launch
