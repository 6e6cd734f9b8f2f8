#include "bench/server_runner.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "bench/http_client.h"
#include "bench/process_util.h"

namespace sf::bench {

namespace {

// Waits up to 10 s for each of `pids` (a killed head's children) to exit; SIGKILLs the rest.
void await_exit(const std::vector<pid_t> &pids) {
    for (pid_t c : pids) {
        for (int i = 0; i < 200 && kill(c, 0) == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (kill(c, 0) == 0) kill(c, SIGKILL);
    }
}

}  // namespace

server_runner::server_runner(server_spec spec, std::string work_dir)
    : spec_(std::move(spec)), work_dir_(std::move(work_dir)) {
    std::filesystem::create_directories(work_dir_ + "/state");
    if (spec_.kind == server_kind::external) {
        base_url_ = normalize_base_url(spec_.url);
    } else {
        port_     = free_port();
        base_url_ = "http://127.0.0.1:" + std::to_string(port_);
    }
}

server_runner::~server_runner() {
    stop();
    sampling_ = false;
    if (sampler_.joinable()) sampler_.join();
}

std::vector<std::string> server_runner::argv() const {
    std::vector<std::string> a;
    std::string port = std::to_string(port_);
    if (spec_.kind == server_kind::superfluid) {
        a = {spec_.binary, "serve", spec_.model, "--port", port, "--state-dir",
             work_dir_ + "/state",
             // The prefix cache's disk tier: fresh per run, kept across the scenario's restarts.
             "--cache-dir", work_dir_ + "/prefix-cache"};
        // 0: the server's own default (bench --server-defaults).
        if (spec_.ctx_size > 0) a.insert(a.end(), {"--ctx-size", std::to_string(spec_.ctx_size)});
        if (spec_.parallel > 0) a.insert(a.end(), {"--parallel", std::to_string(spec_.parallel)});
        if (spec_.threads > 0) a.insert(a.end(), {"--threads", std::to_string(spec_.threads)});
        a.insert(a.end(), spec_.args.begin(), spec_.args.end());
        a.insert(a.end(), extra_args_.begin(), extra_args_.end());
    } else {
        // Same total context and slots as Superfluid: -c is the whole KV cache.
        a = {spec_.binary, "-m", spec_.model, "--host", "127.0.0.1", "--port", port, "--no-webui"};
        if (spec_.ctx_size > 0 && spec_.parallel > 0)
            a.insert(a.end(), {"-c", std::to_string(spec_.ctx_size * spec_.parallel)});
        if (spec_.parallel > 0) a.insert(a.end(), {"-np", std::to_string(spec_.parallel)});
        if (spec_.threads > 0) a.insert(a.end(), {"-t", std::to_string(spec_.threads)});
        a.insert(a.end(), spec_.peer_args.begin(), spec_.peer_args.end());
    }
    return a;
}

bool server_runner::wait_healthy(double timeout_s) {
    double deadline = now_s() + timeout_s;
    while (now_s() < deadline) {
        if (http_get(base_url_, "/health", 1.0) == 200) {
            discover_model(base_url_);
            return true;
        }
        if (pid_ > 0) {
            int st = 0;
            if (waitpid(pid_, &st, WNOHANG) == pid_) {
                pid_ = -1;
                return false;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
}

bool server_runner::start(std::string &error) {
    if (spec_.kind == server_kind::external) {
        if (!wait_healthy(10)) {
            error = "no /health 200 from " + base_url_;
            return false;
        }
        return true;
    }
    pid_ = spawn_process(argv(), log_path());
    if (pid_ < 0) {
        error = "cannot start " + spec_.binary;
        return false;
    }
    if (!sampling_.exchange(true)) sampler_ = std::thread([this] { sample_loop(); });
    if (!wait_healthy(300)) {
        error = spec_.name + " did not become healthy; see " + log_path();
        stop();
        return false;
    }
    wait_settled(60);
    return true;
}

bool server_runner::wait_settled(double timeout_s) {
    auto cpu = [this] {
        double s = 0;
        for (pid_t p : own_pids()) s += proc_cpu_seconds(p);
        return s;
    };
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int quiet     = 0;
    double before = cpu();
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        const double now = cpu();
        quiet            = now - before < 0.025 ? quiet + 1 : 0;  // < 5 % of a core
        before           = now;
        if (quiet >= 5) return true;
    }
    return false;
}

void server_runner::stop() {
    if (pid_ <= 0) return;
    sample_once();
    std::vector<pid_t> children = proc_children(pid_);
    kill(pid_, SIGTERM);
    bool exited = false;
    for (int i = 0; i < 300 && !exited; ++i) {
        int st = 0;
        exited = waitpid(pid_, &st, WNOHANG) == pid_;
        if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!exited) {
        kill(-pid_, SIGKILL);
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
    // The next engine must not start before the worker is gone too.
    await_exit(children);
}

bool server_runner::restart(std::string &error) {
    if (!controlled()) {
        error = "cannot restart a server given by --url";
        return false;
    }
    stop();
    return start(error);
}

bool server_runner::kill_engine(std::string &error) {
    if (!controlled() || pid_ <= 0) {
        error = "no process to kill";
        return false;
    }
    sample_once();
    if (spec_.kind == server_kind::superfluid) {
        for (pid_t c : proc_children(pid_)) {
            if (proc_cmdline(c).find(" worker") != std::string::npos) {
                kill(c, SIGKILL);
                return true;
            }
        }
        error = "no worker process under the head";
        return false;
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = spawn_process(argv(), log_path());
    return pid_ > 0;
}

bool server_runner::kill_head(std::string &error) {
    if (!controlled() || pid_ <= 0) {
        error = "no process to kill";
        return false;
    }
    sample_once();
    const std::vector<pid_t> children = proc_children(pid_);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    // The new head must not meet the old worker (the model's memory, the state lock).
    await_exit(children);
    pid_ = spawn_process(argv(), log_path());
    if (pid_ <= 0) {
        error = "cannot start " + spec_.binary + " again";
        return false;
    }
    if (!wait_healthy(300)) {
        error = spec_.name + " did not become healthy again; see " + log_path();
        return false;
    }
    wait_settled(60);
    return true;
}

std::vector<pid_t> server_runner::own_pids() const {
    std::vector<pid_t> out;
    if (pid_ <= 0) return out;
    out.push_back(pid_);
    for (pid_t c : proc_children(pid_)) out.push_back(c);
    return out;
}

void server_runner::sample_once() {
    pid_t head = pid_.load();
    if (head <= 0) return;
    std::map<std::string, double> now;
    if (spec_.kind == server_kind::llama_server) {
        now["server"] = proc_peak_rss_mib(head);
    } else {
        now["head"] = proc_peak_rss_mib(head);
        // A hot standby worker (serve --standby) is a child too; its figure is its own.
        for (pid_t c : proc_children(head)) {
            std::string cmd = proc_cmdline(c);
            if (cmd.find(" worker") == std::string::npos) continue;
            std::string role = cmd.find("--standby-fd") != std::string::npos ? "standby" : "worker";
            now[role]        = std::max(now[role], proc_peak_rss_mib(c));
        }
    }
    std::lock_guard<std::mutex> lk(mu_);
    for (auto &[role, v] : now) peak_[role] = std::max(peak_[role], v);
}

void server_runner::sample_loop() {
    while (sampling_) {
        sample_once();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

nlohmann::json server_runner::peak_rss_mib() const {
    std::lock_guard<std::mutex> lk(mu_);
    nlohmann::json j = nlohmann::json::object();
    for (auto &[role, v] : peak_) j[role] = v;
    return j;
}

}  // namespace sf::bench
