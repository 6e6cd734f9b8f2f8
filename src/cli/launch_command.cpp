#include "cli/launch_command.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "cli/launch_agents.h"
#include "cli/launch_server.h"
#include "cli/model_source.h"
#include "store/model_ref.h"
#include "util/paths.h"

extern char **environ;

namespace sf {

namespace fs = std::filesystem;

void add_launch_options(CLI::App &cmd, launch_options &o) {
    std::string names;
    for (const auto &a : launch_agents()) names += std::string(names.empty() ? "" : ", ") + a.name;
    cmd.add_option("agent", o.agent, "The agent: " + names)->required();
    cmd.add_option("args", o.args, "Arguments for the agent (after --)");
    cmd.add_option("--host", o.host, "Server address")->capture_default_str();
    cmd.add_option("--port", o.port, "Server port")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    cmd.add_option("--model", o.model,
                   "Model to serve when launch starts the server (a .gguf or org/repo[:TAG])");
    cmd.add_option("--priority", o.priority, "Priority class of the agent's requests")
        ->capture_default_str()
        ->check(CLI::IsMember({"interactive", "normal", "batch"}));
    cmd.add_option("--bin", o.bin, "The agent's executable (default: found on PATH)");
    cmd.add_option("--state-dir", o.state_dir,
                   "State directory (default: $XDG_STATE_HOME/superfluid)");
    cmd.add_flag("--print", o.print,
                 "Show the environment and config launch would set; run nothing");
}

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

void print_plan(const agent_def &a, const launch_plan &p, const launch_context &c,
                const std::string &program, const std::vector<std::string> &user_args) {
    printf("# superfluid launch %s (%s): requests go to %s, model %s, priority %s\n", a.name,
           a.title, c.base_url.c_str(), c.model.c_str(), c.priority.c_str());
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

// Writes the plan's files; the agent's own files are backed up to "<path>.superfluid-backup"
// (a backup left by an interrupted launch is put back first).
bool write_files(const launch_plan &p) {
    for (const auto &f : p.files) {
        std::error_code ec;
        fs::create_directories(fs::path(f.path).parent_path(), ec);
        if (f.restore) {
            std::string bak = f.path + ".superfluid-backup";
            if (fs::exists(bak, ec)) fs::rename(bak, f.path, ec);
            if (fs::exists(f.path, ec))
                fs::copy_file(f.path, bak, fs::copy_options::overwrite_existing, ec);
            if (ec) {
                fprintf(stderr, "superfluid launch: cannot back up %s: %s\n", f.path.c_str(),
                        ec.message().c_str());
                return false;
            }
        }
        std::ofstream out(f.path, std::ios::trunc);
        out << f.content;
        if (!out) {
            fprintf(stderr, "superfluid launch: cannot write %s\n", f.path.c_str());
            return false;
        }
    }
    return true;
}

void restore_files(const launch_plan &p) {
    for (const auto &f : p.files) {
        if (!f.restore) continue;
        std::error_code ec;
        std::string bak = f.path + ".superfluid-backup";
        if (fs::exists(bak, ec))
            fs::rename(bak, f.path, ec);
        else
            fs::remove(f.path, ec);  // it did not exist before the launch
    }
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

}  // namespace

int run_launch(const launch_options &o) {
    const agent_def *a = find_agent(o.agent);
    if (!a) {
        fprintf(stderr, "superfluid launch: unknown agent \"%s\"; known agents:\n",
                o.agent.c_str());
        for (const auto &x : launch_agents()) fprintf(stderr, "  %-10s %s\n", x.name, x.title);
        return 2;
    }
    const std::string state = o.state_dir.empty() ? paths::default_state_dir() : o.state_dir;
    const std::string host  = o.host == "0.0.0.0" ? "127.0.0.1" : o.host;

    server_probe server;
    if (o.print) {
        server = probe_server(host, o.port);  // --print starts nothing
    } else if (!ensure_server(host, o.port, o.model, o.state_dir, server)) {
        return 1;
    }
    launch_context c;
    c.base_url = "http://" + host + ":" + std::to_string(o.port);
    c.model    = server.model_id;
    if (c.model.empty()) {  // not running (--print): the name serve will give it
        c.model = o.model.empty()                       ? kDefaultModel
                  : store::is_local_model_path(o.model) ? fs::path(o.model).stem().string()
                                                        : o.model;
    }
    c.priority       = o.priority;
    const char *home = std::getenv("HOME");
    c.home           = home && *home ? home : "/tmp";
    const char *xdg  = std::getenv("XDG_CONFIG_HOME");
    c.config_home    = xdg && *xdg ? xdg : c.home + "/.config";
    c.launch_dir     = state + "/launch/" + a->name;
    if (server.context_length > 0) c.context_length = server.context_length;

    launch_plan p       = a->plan(c);
    std::string program = o.bin.empty() ? p.program : o.bin;
    if (o.print) {
        print_plan(*a, p, c, program, o.args);
        return 0;
    }
    std::string exe = find_on_path(program);
    if (exe.empty()) {
        fprintf(stderr, "superfluid launch: %s (%s) is not installed: %s, or pass --bin PATH\n",
                program.c_str(), a->title, a->install);
        return 127;
    }
    if (!write_files(p)) return 1;
    fprintf(stderr, "superfluid launch: %s → %s (model %s, priority %s)\n", a->title,
            c.base_url.c_str(), c.model.c_str(), c.priority.c_str());

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
    if (!restore) {
        execve(exe.c_str(), argv.data(), envp.data());
        perror("superfluid launch: exec");
        return 127;
    }
    // The agent's own config files must be put back afterwards, so it runs as a child; the
    // terminal's Ctrl-C reaches it, not us.
    pid_t pid = fork();
    if (pid == 0) {
        execve(exe.c_str(), argv.data(), envp.data());
        _exit(127);
    }
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    restore_files(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace sf
