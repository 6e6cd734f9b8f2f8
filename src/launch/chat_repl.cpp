#include "launch/chat_repl.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "launch/chat_stream.h"

namespace sf::launch {

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
    g_interrupted.store(true);
}

// SIGINT sets the flag and interrupts a blocking read (no SA_RESTART).
void install_sigint() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, nullptr);
}

constexpr const char *k_dim   = "\x1b[2m";
constexpr const char *k_reset = "\x1b[0m";

chat_turn_options turn_options(const run_options &o) {
    chat_turn_options t;
    t.host       = o.host;
    t.port       = o.port;
    t.model      = o.model;
    t.think      = o.think;
    t.max_tokens = o.max_tokens;
    return t;
}

void print_help() {
    std::cout << "Commands:\n"
                 "  /set system TEXT   start over with TEXT as the system message\n"
                 "  /set think on|off  show the model's thinking (if it thinks) or not\n"
                 "  /clear             forget the conversation so far\n"
                 "  /bye               leave (Ctrl-D too)\n"
                 "  \"\"\"                begin or end a multi-line message\n"
                 "Ctrl-C stops an answer.\n";
}

// Reads one message: a line, or the lines between """ markers. False at EOF.
bool read_message(std::string &out, std::ofstream &history) {
    out.clear();
    std::string line;
    std::cout << ">>> " << std::flush;
    for (;;) {
        if (std::getline(std::cin, line)) break;
        if (std::cin.eof()) return false;
        std::cin.clear();  // a read interrupted by Ctrl-C
        if (g_interrupted.exchange(false)) std::cout << "\nUse Ctrl-D or /bye to exit.\n>>> ";
        std::cout << std::flush;
    }
    static const std::string quotes = "\"\"\"";
    auto ends_quotes                = [](const std::string &l) {
        return l.size() >= quotes.size() && l.compare(l.size() - 3, 3, quotes) == 0;
    };
    if (line.rfind(quotes, 0) == 0) {
        std::string rest = line.substr(3);
        if (ends_quotes(rest)) {
            out = rest.substr(0, rest.size() - 3);  // """one line"""
        } else {
            std::string block = rest;
            bool first        = rest.empty();  // nothing after the opening marker
            for (;;) {
                std::cout << "... " << std::flush;
                std::string l;
                if (!std::getline(std::cin, l)) {
                    if (std::cin.eof()) break;
                    std::cin.clear();
                    continue;
                }
                const bool last = ends_quotes(l);
                if (!first) block += "\n";
                first = false;
                block += last ? l.substr(0, l.size() - 3) : l;
                if (last) break;
            }
            out = block;
        }
    } else {
        out = line;
    }
    if (history.is_open() && !out.empty()) history << out << "\n" << std::flush;
    return true;
}

}  // namespace

int run_once(const run_options &o) {
    install_sigint();
    std::vector<chat_line> msgs;
    if (!o.system.empty()) msgs.push_back({"system", o.system});
    msgs.push_back({"user", o.prompt});
    const bool tty   = isatty(STDOUT_FILENO);
    bool in_thinking = false;
    auto res         = chat_turn(
                turn_options(o), msgs,
                [&](const std::string &t) {
            if (o.hide_thinking) return;
            if (!in_thinking && tty) std::cout << k_dim;
            in_thinking = true;
            std::cout << t << std::flush;
        },
                [&](const std::string &t) {
            if (in_thinking) {
                std::cout << (tty ? k_reset : "") << "\n\n";
                in_thinking = false;
            }
            std::cout << t << std::flush;
        },
                g_interrupted);
    if (in_thinking && tty) std::cout << k_reset;
    std::cout << "\n" << std::flush;
    if (res.cancelled) return 130;
    if (!res.ok) {
        std::cerr << "Error: " << res.error << "\n";
        return 1;
    }
    return 0;
}

int run_interactive(const run_options &o) {
    install_sigint();
    std::ofstream history;
    if (!o.history_path.empty()) history.open(o.history_path, std::ios::app);
    run_options cur = o;
    std::vector<chat_line> msgs;
    auto reset = [&] {
        msgs.clear();
        if (!cur.system.empty()) msgs.push_back({"system", cur.system});
    };
    reset();
    std::cout << "Chatting with " << o.model << " (interactive class). /? for help.\n";
    std::string input;
    while (read_message(input, history)) {
        if (input.empty()) continue;
        if (input == "/bye") return 0;
        if (input == "/?" || input == "/help") {
            print_help();
            continue;
        }
        if (input == "/clear") {
            reset();
            std::cout << "Cleared the conversation.\n";
            continue;
        }
        if (input.rfind("/set system ", 0) == 0) {
            cur.system = input.substr(12);
            reset();
            std::cout << "Set the system message (conversation restarted).\n";
            continue;
        }
        if (input == "/set think on" || input == "/set think off") {
            cur.think = input == "/set think on" ? 1 : 0;
            std::cout << "Thinking " << (cur.think ? "shown" : "off") << ".\n";
            continue;
        }
        if (input[0] == '/') {
            std::cout << "Unknown command '" << input << "'. Type /? for help.\n";
            continue;
        }
        msgs.push_back({"user", input});
        g_interrupted.store(false);
        bool in_thinking = false;
        auto res         = chat_turn(
                    turn_options(cur), msgs,
                    [&](const std::string &t) {
                if (cur.think == 0) return;
                if (!in_thinking) std::cout << k_dim;
                in_thinking = true;
                std::cout << t << std::flush;
            },
                    [&](const std::string &t) {
                if (in_thinking) {
                    std::cout << k_reset << "\n\n";
                    in_thinking = false;
                }
                std::cout << t << std::flush;
            },
                    g_interrupted);
        if (in_thinking) std::cout << k_reset;
        std::cout << "\n\n" << std::flush;
        if (res.cancelled) {
            g_interrupted.store(false);
            std::cout << "(stopped)\n";
        } else if (!res.ok) {
            std::cerr << "Error: " << res.error << "\n";
            msgs.pop_back();  // the turn did not happen
            continue;
        }
        // What the person saw stays in the conversation, also when stopped.
        msgs.push_back({"assistant", res.content});
    }
    std::cout << "\n";
    return 0;
}

}  // namespace sf::launch
