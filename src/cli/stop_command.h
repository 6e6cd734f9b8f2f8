// `superfluid stop [--state-dir DIR]`: stops the server of a state directory (the one whose
// lock, STATE/serve.lock, it holds: one server per state directory), as `run` and `launch`
// tell when they leave a server they started running. SIGTERM, then waits for it to exit;
// its unfinished sessions resume on its next start.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace sf {

struct stop_options {
    std::string state_dir;  // "" = the default state directory
    int timeout_s = 30;     // how long to wait for the server to exit
};

/** Adds the `stop` subcommand's options to `cmd`. */
void add_stop_options(CLI::App &cmd, stop_options &o);

/**
 * Stops the server holding `o.state_dir`. 0 once it has exited; 1 when none runs there, it
 * cannot be signalled, or it is still running after `o.timeout_s` (each with a message).
 */
int run_stop(const stop_options &o);

}  // namespace sf
