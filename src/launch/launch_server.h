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
    int context_length  = 0;    // per request (/api/ps); 0: not said
    int trained_context = 0;    // the model's training context (/api/show); 0: not said
    int started_pid     = 0;    // ensure_server started this server (its pid); 0: found running
};

/** Asks host:port once (short timeouts). */
server_probe probe_server(const std::string &host, int port);

/**
 * Makes sure a ready server answers on host:port, starting `exe serve` (`exe`: the superfluid
 * executable) with `model` ("" = default) and serve's defaults otherwise (the KV pool: each
 * request up to the model's training context) when none does. `state_dir` "" = the default.
 * Prints progress to stderr; false on failure (with the server log's tail printed).
 */
bool ensure_server(const std::string &exe, const std::string &host, int port,
                   const std::string &model, const std::string &state_dir, server_probe &out);

/**
 * What `run` and `launch` print on exit when they started the server (`p.started_pid`): that
 * it keeps running, and the command that stops it (`superfluid stop`, with `--state-dir` when
 * not the default). "" when the server was found running.
 */
std::string server_left_running_note(const server_probe &p, const std::string &host, int port,
                                     const std::string &state_dir);

}  // namespace sf::launch
