#include "cli/run_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <iterator>

#include "cli/model_commands.h"
#include "cli/serve_command.h"
#include "launch/chat_repl.h"
#include "launch/launch_server.h"
#include "util/paths.h"

namespace sf {

void add_run_options(CLI::App &cmd, run_command_options &o) {
    cmd.add_option("model", o.model,
                   "Model: a .gguf, org/repo[:TAG], a pulled model's name, or 'default' (a running "
                   "server's model is used as it is); anything else is the prompt's first word");
    cmd.add_option("prompt", o.prompt, "Answer this once and exit (else: stdin, or a chat)");
    cmd.add_option("--host", o.host, "Server address")->capture_default_str();
    cmd.add_option("--port", o.port, "Server port")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    cmd.add_option("--state-dir", o.state_dir,
                   "State directory (default: $XDG_STATE_HOME/superfluid)");
    cmd.add_option("--system", o.system, "A system message to start with");
    cmd.add_option("--think", o.think, "Show the model's thinking: on or off")
        ->check(CLI::IsMember({"on", "off"}));
    cmd.add_flag("--hidethinking", o.hide_thinking, "One-shot: do not print the thinking");
    cmd.add_option("--max-tokens", o.max_tokens, "Most tokens of an answer (default: the server's)")
        ->check(CLI::NonNegativeNumber);
}

int run_run_command(const run_command_options &in) {
    // `run "Say hi"`: a lone argument that is no model is the prompt, as `ollama run` would
    // have needed a model first.
    std::vector<std::string> words = in.prompt;
    std::string model              = in.model == "default" ? "" : in.model;
    if (!model.empty() && !names_a_model(model, in.state_dir)) {
        words.insert(words.begin(), model);
        model.clear();
    }
    // A model to pull first: with its progress bar here, not in the log of a server starting.
    if (!launch::probe_server(in.host, in.port).up && needs_pull(model, in.state_dir)) {
        if (int rc = run_pull(model, in.state_dir); rc != 0) return rc;
    }
    launch::server_probe probe;
    if (!launch::ensure_server(self_exe(), in.host, in.port, model, in.state_dir, probe)) return 1;
    // Whatever the outcome, a server this command started is said to keep running.
    auto done = [&](int rc) {
        const std::string note =
            launch::server_left_running_note(probe, in.host, in.port, in.state_dir);
        if (!note.empty()) std::cerr << "superfluid run: " << note << "\n";
        return rc;
    };
    launch::run_options o;
    o.host          = in.host;
    o.port          = in.port;
    o.model         = probe.model_id.empty() ? model : probe.model_id;
    o.system        = in.system;
    o.think         = in.think.empty() ? -1 : in.think == "on" ? 1 : 0;
    o.hide_thinking = in.hide_thinking;
    o.max_tokens    = in.max_tokens;
    for (const auto &w : words) o.prompt += (o.prompt.empty() ? "" : " ") + w;
    if (o.prompt.empty() && !isatty(STDIN_FILENO)) {
        o.prompt.assign(std::istreambuf_iterator<char>(std::cin), {});
        while (!o.prompt.empty() && (o.prompt.back() == '\n' || o.prompt.back() == '\r'))
            o.prompt.pop_back();
        if (o.prompt.empty()) {
            std::cerr << "Error: no prompt (stdin was empty)\n";
            return done(1);
        }
    }
    int rc = 0;
    if (!o.prompt.empty()) {
        rc = launch::run_once(o);
    } else {
        const std::string dir = in.state_dir.empty() ? paths::default_state_dir() : in.state_dir;
        if (paths::make_dirs(dir)) o.history_path = dir + "/run_history";
        rc = launch::run_interactive(o);
    }
    return done(rc);
}

}  // namespace sf
