// `superfluid launch AGENT [-- agent args]`: the command line's flags only; the launch itself
// (server, agent config, running the agent) is launch/launcher.h.
#pragma once

#include "launch/launcher.h"

namespace CLI {
class App;
}

namespace sf {

/** Adds the `launch` subcommand's options to `cmd`. */
void add_launch_options(CLI::App &cmd, launch::launch_options &o);

/** Runs the launch (launch::run_launch) with this executable as the server it may start. */
int run_launch_command(launch::launch_options o);

}  // namespace sf
