#include "launch/launcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "launch/context_fit.h"
#include "launch/launch_files.h"
#include "models/model_ref.h"
#include "util/paths.h"

extern char **environ;

namespace sf::launch {

namespace fs = std::filesystem;

namespace {

// POSIX shell single quoting.
std::string sh(const std::string &s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string find_on_path(const std::string &prog) {
    if (prog.find('/') != std::string::npos) return access(prog.c_str(), X_OK) == 0 ? prog : "";
    const char *path = std::getenv("PATH");
    std::string p    = path ? path : "/usr/bin:/bin";
    size_t start     = 0;
    while (start <= p.size()) {
        size_t colon = p.find(':', start);
        std::string dir =
            p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        std::string cand = (dir.empty() ? "." : dir) + "/" + prog;
        if (access(cand.c_str(), X_OK) == 0) return cand;
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return "";
}

// The class as printed: "none (the server's default)" when the agent carries none.
std::string priority_shown(const launch_context &c) {
    return c.priority.empty() ? "none (the server's default)" : c.priority;
}

// What --print says about context: the server's, judged for the agent, or what a server launch
// starts would give (serve's defaults: the KV pool, each request up to the training context).
void print_context(const agent_def &a, const server_probe &server, const std::string &host,
                   int port) {
    if (a.min_context <= 0) return;
    if (!server.ready) {
        printf(
            "# no server answers: launch would start `superfluid serve` (each request up to "
            "the model's training context; %s works with at least %s tokens)\n",
            a.name, with_commas(a.min_context).c_str());
        return;
    }
    const context_verdict v = judge_context(a, server, host, port, false);
    if (v.fit == context_fit::fits)
        printf("# context per request: %s tokens (%s works with at least %s)\n",
               with_commas(server.context_length).c_str(), a.name,
               with_commas(a.min_context).c_str());
    else if (!v.message.empty())
        printf("# %s: %s\n", v.fit == context_fit::tight ? "warning" : "launch would refuse",
               v.message.c_str());
}

void print_plan(const agent_def &a, const launch_plan &p, const launch_context &c,
                const std::string &program, const std::vector<std::string> &user_args) {
    printf("# superfluid launch %s (%s): requests go to %s, model %s, priority %s\n", a.name,
           a.title, c.base_url.c_str(), c.model.c_str(), priority_shown(c).c_str());
    if (c.priority.empty())
        printf(
            "# no class is sent (the key only tells this agent apart); --priority CLASS "
            "would travel as: %s\n",
            p.priority_note.c_str());
    else
        printf("# priority travels as: %s\n", p.priority_note.c_str());
    for (const auto &u : p.unset) printf("unset %s\n", u.c_str());
    for (const auto &[k, v] : p.env) printf("export %s=%s\n", k.c_str(), sh(v).c_str());
    for (const auto &f : p.files) {
        printf(
            "# file %s (%s):\n", f.path.c_str(),
            f.restore ? "the agent's own; backed up and restored when it exits" : "launch-owned");
        printf("%s", f.content.c_str());
        if (!f.content.empty() && f.content.back() != '\n') printf("\n");
        printf("# end of file\n");
    }
    std::string cmd = sh(program);
    for (const auto &x : p.args) cmd += " " + sh(x);
    for (const auto &x : user_args) cmd += " " + sh(x);
    printf("exec %s\n", cmd.c_str());
}

std::vector<std::string> agent_env(const launch_plan &p) {
    std::map<std::string, std::string> env;
    for (char **e = environ; *e; ++e) {
        std::string kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto &u : p.unset) env.erase(u);
    for (const auto &[k, v] : p.env) env[k] = v;
    std::vector<std::string> out;
    for (const auto &[k, v] : env) out.push_back(k + "=" + v);
    return out;
}

// The address a client reaches the server at: one listening on every address (0.0.0.0) is
// reached on loopback.
std::string reach_host(const std::string &host) {
    return host == "0.0.0.0" ? "127.0.0.1" : host;
}

// Whether `server`'s context lets agent `a` run: false (said on stderr, with the note on a
// server launch started) when it is too small; a warning when tight.
bool context_allows(const agent_def &a, const server_probe &server, const std::string &host,
                    const launch_options &o) {
    const context_verdict v = judge_context(a, server, host, o.port, server.started_pid > 0);
    if (v.fit == context_fit::tight)
        fprintf(stderr, "superfluid launch: warning: %s\n", v.message.c_str());
    if (v.fit != context_fit::too_small) return true;
    fprintf(stderr, "superfluid launch: %s\n", v.message.c_str());
    const std::string note = server_left_running_note(server, host, o.port, o.state_dir);
    if (!note.empty()) fprintf(stderr, "superfluid launch: %s\n", note.c_str());
    return false;
}

}  // namespace

launch_context make_context(const launch_options &o, const agent_def &a, const server_probe &server,
                            const std::string &home) {
    launch_context c;
    c.base_url = "http://" + reach_host(o.host) + ":" + std::to_string(o.port);
    c.model    = server.model_id;
    if (c.model.empty() && o.planned_model) c.model = o.planned_model(o.model);
    if (c.model.empty()) {  // not running (--print): the name serve will give it
        c.model = o.model.empty()                        ? models::kDefaultModel
                  : models::is_local_model_path(o.model) ? fs::path(o.model).stem().string()
                                                         : o.model;
    }
    c.priority      = o.priority;
    c.home          = home;
    const char *xdg = std::getenv("XDG_CONFIG_HOME");
    c.config_home   = xdg && *xdg ? xdg : c.home + "/.config";
    c.launch_dir =
        (o.state_dir.empty() ? paths::default_state_dir() : o.state_dir) + "/launch/" + a.name;
    if (server.context_length > 0) c.context_length = server.context_length;
    return c;
}

int run_launch(const launch_options &o) {
    const agent_def *a = find_agent(o.agent);
    if (!a) {
        fprintf(stderr, "superfluid launch: unknown agent \"%s\"; known agents:\n",
                o.agent.c_str());
        for (const auto &x : launch_agents()) fprintf(stderr, "  %-10s %s\n", x.name, x.title);
        return 2;
    }
    const std::string host = reach_host(o.host);
    server_probe server;
    if (o.print) {
        server = probe_server(host, o.port);  // --print starts nothing
    } else if (!ensure_server(o.superfluid_exe, host, o.port, o.model, o.state_dir, server)) {
        return 1;
    }
    const char *home       = std::getenv("HOME");
    const launch_context c = make_context(o, *a, server, home && *home ? home : "/tmp");
    launch_plan p          = a->plan(c);
    std::string program    = o.bin.empty() ? p.program : o.bin;
    if (o.print) {
        print_plan(*a, p, c, program, o.args);
        print_context(*a, server, host, o.port);
        return 0;
    }
    std::string exe = find_on_path(program);
    if (exe.empty()) {
        fprintf(stderr, "superfluid launch: %s (%s) is not installed: %s, or pass --bin PATH\n",
                program.c_str(), a->title, a->install);
        return 127;
    }
    // An agent whose first requests do not fit fails its first turn: said here, before it runs.
    if (!context_allows(*a, server, host, o)) return 1;
    if (!write_files(p)) return 1;
    fprintf(stderr, "superfluid launch: %s → %s (model %s, priority %s)\n", a->title,
            c.base_url.c_str(), c.model.c_str(), priority_shown(c).c_str());

    std::vector<std::string> argv_s = {exe};
    argv_s.insert(argv_s.end(), p.args.begin(), p.args.end());
    argv_s.insert(argv_s.end(), o.args.begin(), o.args.end());
    std::vector<std::string> env_s = agent_env(p);
    std::vector<char *> argv, envp;
    for (auto &s : argv_s) argv.push_back(s.data());
    for (auto &s : env_s) envp.push_back(s.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);

    bool restore = false;
    for (const auto &f : p.files) restore = restore || f.restore;
    // A server launch started is named when the agent exits: launch must outlive the agent.
    const std::string note = server_left_running_note(server, host, o.port, o.state_dir);
    if (!restore && note.empty()) {
        execve(exe.c_str(), argv.data(), envp.data());
        perror("superfluid launch: exec");
        return 127;
    }
    // The agent's own config files must be put back afterwards (or the server launch started
    // named), so it runs as a child; the terminal's Ctrl-C reaches it, not us.
    pid_t pid = fork();
    if (pid == 0) {
        execve(exe.c_str(), argv.data(), envp.data());
        _exit(127);
    }
    if (pid < 0) {
        perror("superfluid launch: fork");
        restore_files(p);
        return 1;
    }
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    restore_files(p);
    if (!note.empty()) fprintf(stderr, "superfluid launch: %s\n", note.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace sf::launch
