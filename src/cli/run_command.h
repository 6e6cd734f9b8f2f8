// `superfluid run [MODEL] [PROMPT...]`: the command line's flags; the chat itself is
// launch/chat_repl.h and the server it talks to launch/launch_server.h.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sf {

struct run_command_options {
    std::string model;                // "" or "default": the default model
    std::vector<std::string> prompt;  // words of a one-shot prompt
    std::string host = "127.0.0.1";
    int port         = 8453;
    std::string state_dir;
    std::string system;
    std::string think;  // "", "on" or "off"
    bool hide_thinking = false;
    int max_tokens     = 0;
};

/** Adds the `run` subcommand's options to `cmd`. */
void add_run_options(CLI::App &cmd, run_command_options &o);

/**
 * Finds or starts the server (with MODEL), then answers PROMPT (or stdin when it is not a
 * terminal) once, or chats on the terminal. Returns the exit status (1 on any error).
 */
int run_run_command(const run_command_options &o);

}  // namespace sf
