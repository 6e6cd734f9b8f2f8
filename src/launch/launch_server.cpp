#include "launch/launch_server.h"

#include <cpp-httplib/httplib.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "util/paths.h"

namespace sf::launch {

using json = nlohmann::json;

server_probe probe_server(const std::string &host, int port) {
    server_probe p;
    httplib::Client cli(host, port);
    cli.set_connection_timeout(1);
    cli.set_read_timeout(5);
    auto h = cli.Get("/health");
    if (!h) return p;
    p.up            = true;
    p.health_status = h->status;
    p.ready         = h->status == 200;
    if (!p.ready) return p;
    if (auto m = cli.Get("/v1/models"); m && m->status == 200) {
        auto j = json::parse(m->body, nullptr, false);
        if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty())
            p.model_id = j["data"][0].value("id", "");
    }
    if (auto ps = cli.Get("/api/ps"); ps && ps->status == 200) {
        auto j = json::parse(ps->body, nullptr, false);
        if (j.is_object() && j.contains("models") && j["models"].is_array() && !j["models"].empty())
            p.context_length = j["models"][0].value("context_length", 0);
    }
    // The training context, as Ollama's /api/show gives it: model_info's ARCH.context_length.
    if (p.model_id.empty()) return p;
    auto show = cli.Post("/api/show", json{{"model", p.model_id}}.dump(), "application/json");
    if (show && show->status == 200) {
        auto j = json::parse(show->body, nullptr, false);
        if (j.is_object() && j.contains("model_info") && j["model_info"].is_object()) {
            const json &mi         = j["model_info"];
            const std::string arch = mi.value("general.architecture", "");
            const auto it          = mi.find(arch + ".context_length");
            if (!arch.empty() && it != mi.end() && it->is_number_integer())
                p.trained_context = it->get<int>();
        }
    }
    return p;
}

// Starts `args` as a daemon (double fork: its parent is init, not the agent that launch
// becomes) in its own session, so the agent's Ctrl-C does not reach it. Output goes to `log`.
// Returns its pid, or -1.
static pid_t start_detached(std::vector<std::string> args, const std::string &log) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        close(fds[0]);
        setsid();
        pid_t server = fork();
        if (server == 0) {
            close(fds[1]);
            int fd  = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            int nul = open("/dev/null", O_RDONLY);
            if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
            if (nul >= 0) dup2(nul, 0);
            std::vector<char *> argv;
            for (auto &a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
        ssize_t w = write(fds[1], &server, sizeof server);
        _exit(w == sizeof server ? 0 : 1);
    }
    close(fds[1]);
    pid_t server = -1;
    if (read(fds[0], &server, sizeof server) != sizeof server) server = -1;
    close(fds[0]);
    waitpid(child, nullptr, 0);
    return server;
}

// Prints the last 20 lines the server wrote to `log` from byte `from` on (the log is appended
// to by every start on that port: earlier starts' lines are not this failure's).
static void print_tail(const std::string &log, std::streamoff from_byte) {
    std::ifstream f(log);
    f.seekg(from_byte);
    std::vector<std::string> lines;
    for (std::string l; std::getline(f, l);) lines.push_back(l);
    size_t from = lines.size() > 20 ? lines.size() - 20 : 0;
    for (size_t i = from; i < lines.size(); ++i) fprintf(stderr, "  %s\n", lines[i].c_str());
}

bool ensure_server(const std::string &exe, const std::string &host, int port,
                   const std::string &model, const std::string &state_dir, server_probe &out) {
    out = probe_server(host, port);
    if (out.ready) return true;
    pid_t pid = -1;
    std::string log;
    std::streamoff log_start = 0;
    if (!out.up) {
        std::string dir = state_dir.empty() ? paths::default_state_dir() : state_dir;
        paths::make_dirs(dir + "/launch");
        log                           = dir + "/launch/serve-" + std::to_string(port) + ".log";
        std::vector<std::string> args = {exe, "serve"};
        if (!model.empty()) args.push_back(model);
        for (const std::string &a :
             {std::string("--host"), host, std::string("--port"), std::to_string(port)})
            args.push_back(a);
        if (!state_dir.empty()) args.insert(args.end(), {"--state-dir", state_dir});
        std::error_code ec;
        const auto size = std::filesystem::file_size(log, ec);
        log_start       = ec ? 0 : std::streamoff(size);
        pid             = start_detached(args, log);
        if (pid < 0) {
            perror("superfluid launch: fork");
            return false;
        }
        fprintf(stderr,
                "superfluid launch: starting `superfluid serve%s%s` on %s:%d (pid %d, log %s)\n",
                model.empty() ? "" : " ", model.c_str(), host.c_str(), port, int(pid), log.c_str());
    } else if (out.health_status == 503) {
        fprintf(stderr, "superfluid launch: the server on %s:%d is loading its model\n",
                host.c_str(), port);
    } else {
        fprintf(stderr,
                "superfluid launch: something that is not a superfluid server answers on %s:%d "
                "(GET /health: HTTP %d); pick another --port\n",
                host.c_str(), port, out.health_status);
        return false;
    }
    // A first start may pull a model, so no fixed deadline while the server process lives.
    auto started = std::chrono::steady_clock::now();
    auto told    = started;
    while (true) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        out = probe_server(host, port);
        if (out.ready) {
            out.started_pid = pid > 0 ? pid : 0;
            return true;
        }
        if (pid > 0 && kill(pid, 0) != 0) {  // init reaps it: gone means exited
            fprintf(stderr, "superfluid launch: the server exited before it was ready; log:\n");
            print_tail(log, log_start);
            return false;
        }
        if (pid < 0 && !out.up) {
            fprintf(stderr, "superfluid launch: the server on %s:%d went away\n", host.c_str(),
                    port);
            return false;
        }
        auto now = std::chrono::steady_clock::now();
        if (now - told > std::chrono::seconds(15)) {
            told = now;
            fprintf(stderr, "superfluid launch: still waiting for the server (%lds; log %s)\n",
                    long(std::chrono::duration_cast<std::chrono::seconds>(now - started).count()),
                    log.empty() ? "of the running server" : log.c_str());
        }
    }
}

std::string server_left_running_note(const server_probe &p, const std::string &host, int port,
                                     const std::string &state_dir) {
    if (p.started_pid <= 0) return "";
    std::string stop = "superfluid stop";
    if (!state_dir.empty() && state_dir != paths::default_state_dir())
        stop += " --state-dir " + state_dir;
    return "the server started for this (pid " + std::to_string(p.started_pid) + ", " + host + ":" +
           std::to_string(port) + ") keeps running; `" + stop + "` stops it";
}

}  // namespace sf::launch
