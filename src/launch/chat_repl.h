// `superfluid run`: a terminal chat with the served model, as `ollama run` is. With a prompt
// (or stdin not a terminal) it answers once and exits; else it reads turns from the terminal:
// multi-line input between """ lines, /bye, /clear, /set system TEXT, /set think on|off,
// /help; thinking shown dimmed; Ctrl-C stops the answer, not the session; the input history
// is kept in STATE/run_history. Requests go out as the `interactive` class.
// Thread: the caller's (main); a SIGINT handler only sets a flag.
#pragma once

#include <string>

namespace sf::launch {

struct run_options {
    std::string host = "127.0.0.1";
    int port         = 8453;
    std::string model;           // as the server lists it
    std::string prompt;          // non-empty: answer once and exit
    std::string system;          // a system message to start with
    int think = -1;              // -1: the model's default, 0: off, 1: on
    std::string history_path;    // "" = none
    bool hide_thinking = false;  // one-shot: thinking not printed (ollama's --hidethinking)
    int max_tokens     = 0;      // most tokens of an answer; 0: the server's default
};

/** One-shot: prints the answer to stdout; 0, or 1 with the error on stderr. */
int run_once(const run_options &o);
/** The interactive chat on the terminal; returns the exit status (0 after /bye or EOF). */
int run_interactive(const run_options &o);

}  // namespace sf::launch
