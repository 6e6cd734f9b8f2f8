// `superfluid launch AGENT [-- agent args]`: makes sure a server runs (launch_server.h), then
// runs a coding agent configured to use it and nothing else (launch_agents.h).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sf {

struct launch_options {
    std::string agent;
    std::vector<std::string> args;  // passed to the agent after its launch arguments
    std::string host = "127.0.0.1";
    int port         = 8453;
    std::string model;                     // served when launch starts the server; "" = default
    std::string priority = "interactive";  // class of the agent's requests
    std::string bin;                       // the agent's executable (default: its name on PATH)
    std::string state_dir;
    bool print = false;  // show what would be set, run nothing
};

/** Adds the `launch` subcommand's options to `cmd`. */
void add_launch_options(CLI::App &cmd, launch_options &o);

/** Runs the agent (exec, or child + config restore); returns its exit code. */
int run_launch(const launch_options &o);

}  // namespace sf
