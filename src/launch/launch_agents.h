// What `superfluid launch AGENT` sets for each coding agent so that it talks to Superfluid and
// nothing else (issue #8): environment variables, arguments, and config files. Every agent's
// requests carry a priority class: through the X-Superfluid-Priority header where the agent can
// send custom headers, and through an API key "sk-<class>-superfluid" (api/common/priority.h,
// step 4) where it sends a key; launch_agents.cpp says per agent which of the two it can carry.
// Each agent is also set up to make no call to the outside world (telemetry, update checks, model
// metadata and plugin fetches off; issue #19), as far as its own settings allow.
// A plan is computed, not applied (launcher.h applies it); computing one reads the agent's own
// config file where our settings are merged into it (pi, Cline). Any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sf::launch {

/** What every agent's plan is computed from. */
struct launch_context {
    std::string base_url;     // "http://127.0.0.1:8453" (no trailing slash)
    std::string model;        // the id the server serves
    std::string priority;     // "interactive" | "normal" | "batch"; "" = no class (default)
    std::string home;         // $HOME: where agents keep their own config
    std::string config_home;  // $XDG_CONFIG_HOME, else $HOME/.config
    std::string launch_dir;   // launch-owned directory for this agent's config
    int context_length = 8192;
};

/** A config file the launch writes. */
struct launch_file {
    std::string path;
    std::string content;
    bool restore = false;  // the agent's own file: backed up first, restored when it exits
};

/** How to run one agent against the server. */
struct launch_plan {
    std::string program;                                   // looked up on PATH
    std::vector<std::string> args;                         // before the user's own args
    std::vector<std::pair<std::string, std::string>> env;  // set
    std::vector<std::string> unset;                        // removed from the environment
    std::vector<launch_file> files;                        // written before the agent starts
    std::string priority_note;                             // how the class travels
};

/** An agent `launch` knows, and how to plan its run. */
struct agent_def {
    const char *name;     // "claude", "codex", …
    const char *title;    // "Claude Code"
    const char *install;  // how to get the program when it is not on PATH
    launch_plan (*plan)(const launch_context &);
    int first_request = 0;  // tokens of its first request, about (measured: launch_agents.cpp)
    int min_context   = 0;  // context per request it needs to work, tokens; 0: no minimum
};

/** Every agent `launch` knows, in the order help lists them. */
const std::vector<agent_def> &launch_agents();
/** The agent named `name` (also accepts a few aliases: claude-code, open-code); null if none. */
const agent_def *find_agent(const std::string &name);

}  // namespace sf::launch
