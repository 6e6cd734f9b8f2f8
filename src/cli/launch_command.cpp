#include "cli/launch_command.h"

#include <CLI/CLI.hpp>

#include "cli/model_source.h"
#include "cli/serve_command.h"
#include "core/priority.h"

namespace sf {

void add_launch_options(CLI::App &cmd, launch::launch_options &o) {
    std::string names;
    for (const auto &a : launch::launch_agents())
        names += std::string(names.empty() ? "" : ", ") + a.name;
    cmd.add_option("agent", o.agent, "The agent: " + names)->required();
    cmd.add_option("args", o.args, "Arguments for the agent (after --)");
    cmd.add_option("--host", o.host, "Server address")->capture_default_str();
    cmd.add_option("--port", o.port, "Server port")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    cmd.add_option("--model", o.model,
                   "Model to serve when launch starts the server (a .gguf or org/repo[:TAG])");
    cmd.add_option("--priority", o.priority,
                   "Mark the agent's requests with this class; without it they carry none and "
                   "get the server's --default-priority, as any client that marks nothing (a "
                   "person's chat beside the agents is then never behind them by class)")
        ->check(CLI::IsMember(class_name_list()));
    cmd.add_option("--bin", o.bin, "The agent's executable (default: found on PATH)");
    cmd.add_option("--state-dir", o.state_dir,
                   "State directory (default: $XDG_STATE_HOME/superfluid)");
    cmd.add_flag("--print", o.print,
                 "Show the environment and config launch would set; run nothing");
}

int run_launch_command(launch::launch_options o) {
    o.superfluid_exe = self_exe();
    o.planned_model  = [dir = o.state_dir](const std::string &model) {
        return served_model_name(model, dir);
    };
    return launch::run_launch(o);
}

}  // namespace sf
