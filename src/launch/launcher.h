// `superfluid launch AGENT [-- agent args]`: makes sure a server runs (launch_server.h), then
// runs a coding agent configured to use it and nothing else (launch_agents.h), with its config
// files written and the agent's own put back afterwards (launch_files.h). The command line's
// flags are parsed by cli/launch_command; everything else is here. On the launching thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "launch/launch_agents.h"
#include "launch/launch_server.h"

namespace sf::launch {

/** What `superfluid launch` was asked to do. */
struct launch_options {
    std::string agent;
    std::vector<std::string> args;  // passed to the agent after its launch arguments
    std::string host = "127.0.0.1";
    int port         = 8453;
    std::string model;           // served when launch starts the server; "" = default
    std::string priority;        // class of the agent's requests; "" = none (the server's default)
    std::string bin;             // the agent's executable (default: its name on PATH)
    std::string state_dir;       // "" = the default state directory
    bool print = false;          // show what would be set, run nothing
    std::string superfluid_exe;  // the executable `serve`d when no server answers
    // With no server answering (--print): the id `serve` would give `model` (cli's decision,
    // the hub's reachability included); unset: the default model's, a file's stem, or `model`.
    std::function<std::string(const std::string &model)> planned_model;
};

/**
 * The context agent `a`'s plan is computed from: the server's URL (0.0.0.0 is reached on
 * loopback), the model id the server reports (with none running, the id `serve` would give:
 * `o.planned_model`'s, else models::kDefaultModel, a local file's stem, or the hub reference as
 * given), its context
 * length when known, the class, `home` and the launch-owned folder STATE/launch/AGENT.
 */
launch_context make_context(const launch_options &o, const agent_def &a, const server_probe &server,
                            const std::string &home);

/** Runs the agent (exec, or child + config restore); returns its exit code. */
int run_launch(const launch_options &o);

}  // namespace sf::launch
