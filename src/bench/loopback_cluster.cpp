#include "bench/loopback_cluster.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "bench/http_client.h"
#include "bench/process_util.h"

namespace sf::bench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/** Reads a whole file ("" when unreadable). */
std::string slurp(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

/** Waits up to 10 s for `pid` (not our child) to be gone or a zombie; SIGKILLs it after. */
void await_gone(pid_t pid) {
    auto alive = [pid] { return kill(pid, 0) == 0 && !proc_cmdline(pid).empty(); };
    for (int i = 0; i < 200 && alive(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (alive()) kill(pid, SIGKILL);
}

/** Signals a group (SIGTERM: waits up to 15 s, then SIGKILL), reaps it and its children. */
void end_group(process_group &g, int sig) {
    if (g.pid <= 0) return;
    const std::vector<pid_t> children = proc_children(g.pid);
    kill(-g.pid, sig);
    bool exited = false;
    for (int i = 0; i < 300 && !exited; ++i) {
        exited = waitpid(g.pid, nullptr, WNOHANG) == g.pid;
        if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!exited) {
        kill(-g.pid, SIGKILL);
        waitpid(g.pid, nullptr, 0);
    }
    for (pid_t c : children) await_gone(c);
    g.pid = -1;
}

}  // namespace

loopback_cluster::loopback_cluster(const bench_options &o, std::string dir, std::string logs_prefix)
    : o_(o), dir_(std::move(dir)), logs_prefix_(std::move(logs_prefix)) {
    fs::create_directories(dir_);
}

loopback_cluster::~loopback_cluster() {
    stop();
}

void loopback_cluster::add_engine_args(std::vector<std::string> &a, int threads) const {
    a.insert(a.end(), {"--ctx-size", std::to_string(o_.ctx_size), "--parallel",
                       std::to_string(o_.parallel)});
    if (threads > 0) a.insert(a.end(), {"--threads", std::to_string(threads)});
}

std::string loopback_cluster::start_head(std::string &err) {
    const int api              = free_port();
    guest_port_                = free_port();
    base_                      = "http://127.0.0.1:" + std::to_string(api);
    head_                      = {"head", -1, dir_ + "/head.log", 0};
    std::vector<std::string> a = {o_.superfluid_bin,
                                  "serve",
                                  o_.model,
                                  "--port",
                                  std::to_string(api),
                                  "--state-dir",
                                  dir_ + "/head",
                                  "--cache-dir",
                                  dir_ + "/head-cache",
                                  "--cluster",
                                  "--no-local-worker",
                                  "--guest-port",
                                  std::to_string(guest_port_),
                                  "--guest-host",
                                  "127.0.0.1"};
    add_engine_args(a, o_.threads);
    head_.pid = spawn_process(a, head_.log);
    for (double until = now_s() + 60; head_.pid > 0 && now_s() < until;) {
        // The first start prints `superfluid join HEAD:PORT --token sf1.… --model …`.
        const std::string log = slurp(head_.log);
        const size_t at       = log.find("--token sf1.");
        if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
            const size_t from = at + 8;
            return log.substr(from, log.find_first_of(" \n", from) - from);
        }
        if (waitpid(head_.pid, nullptr, WNOHANG) == head_.pid) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    err = "the cluster head printed no join token; see " + head_.log;
    return "";
}

std::string loopback_cluster::create_token(int uses) const {
    return first_output_line(o_.superfluid_bin + " token create --uses " + std::to_string(uses) +
                             " --state-dir '" + dir_ + "/head' 2>/dev/null");
}

void loopback_cluster::add_guest(const std::string &name, const std::string &token, int threads) {
    process_group g{name, -1, dir_ + "/" + name + ".log", free_port()};
    std::vector<std::string> a = {o_.superfluid_bin,
                                  "join",
                                  "127.0.0.1:" + std::to_string(guest_port_),
                                  "--token",
                                  token,
                                  "--state-dir",
                                  dir_ + "/" + name,
                                  "--model",
                                  o_.model,
                                  "--name",
                                  name,
                                  "--listen-host",
                                  "127.0.0.1",
                                  "--worker-port",
                                  std::to_string(g.worker_port),
                                  "--cache-dir",
                                  dir_ + "/" + name + "-cache"};
    add_engine_args(a, threads);
    g.pid = spawn_process(a, g.log);
    guests_.push_back(g);
}

bool loopback_cluster::wait_active(double timeout_s, std::string &err) {
    for (double until = now_s() + timeout_s; now_s() < until;) {
        std::string body;
        if (http_get(base_, "/api/nodes", 2, &body) == 200) {
            const json j = json::parse(body, nullptr, false);
            std::set<std::string> active;
            if (j.is_object() && j.contains("nodes") && j["nodes"].is_array())
                for (const auto &n : j["nodes"])
                    if (n.value("state", "") == "active") active.insert(n.value("name", ""));
            const bool settled = std::all_of(guests_.begin(), guests_.end(), [&](const auto &g) {
                return (g.pid > 0) == (active.count(g.name) > 0);
            });
            // With no local worker, /health is 200 once a guest is active.
            if (settled && http_get(base_, "/health", 2) == 200) {
                discover_model(base_);
                return true;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    err = "the guests did not become active; see " + dir_ + "/*.log";
    return false;
}

double loopback_cluster::kill_guest(const std::string &name) {
    for (auto &g : guests_) {
        if (g.name != name || g.pid <= 0) continue;
        sample_rss();
        const double at = now_s();
        end_group(g, SIGKILL);
        return at;
    }
    return 0;
}

void loopback_cluster::stop_guest(const std::string &name) {
    sample_rss();
    for (auto &g : guests_)
        if (g.name == name) end_group(g, SIGTERM);
}

void loopback_cluster::stop() {
    if (head_.pid <= 0 && guests_.empty()) return;
    sample_rss();
    for (auto &g : guests_) end_group(g, SIGTERM);
    end_group(head_, SIGTERM);
    std::error_code ec;
    fs::create_directories(fs::path(logs_prefix_).parent_path(), ec);
    for (const process_group &g : guests_)
        fs::copy_file(g.log, logs_prefix_ + "-" + g.name + ".log",
                      fs::copy_options::overwrite_existing, ec);
    fs::copy_file(head_.log, logs_prefix_ + "-head.log", fs::copy_options::overwrite_existing, ec);
    guests_.clear();
}

json loopback_cluster::peak_rss() const {
    return {{"head", rss_head_}, {"guest_join", rss_join_}, {"guest_worker", rss_worker_}};
}

void loopback_cluster::sample_rss() {
    if (head_.pid > 0) rss_head_ = std::max(rss_head_, proc_peak_rss_mib(head_.pid));
    for (const process_group &g : guests_) {
        if (g.pid <= 0) continue;
        rss_join_ = std::max(rss_join_, proc_peak_rss_mib(g.pid));
        for (pid_t c : proc_children(g.pid))
            rss_worker_ = std::max(rss_worker_, proc_peak_rss_mib(c));
    }
}

bool wire_snapshot(int port, std::map<std::string, socket_bytes> &out) {
    const std::string cmd =
        "ss -tinH state established '( dport = :" + std::to_string(port) + " )' 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) return false;
    std::string all;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) all.append(buf, n);
    if (pclose(p) != 0) return false;
    std::istringstream in(all);
    std::string line, key;
    auto field = [](const std::string &l, const char *name) -> uint64_t {
        const size_t at = l.find(name);
        return at == std::string::npos ? 0 : std::stoull(l.substr(at + std::strlen(name)));
    };
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (line[0] != ' ' && line[0] != '\t') {  // "Recv-Q Send-Q LOCAL PEER"
            std::istringstream f(line);
            std::string rq, sq;
            f >> rq >> sq >> key;
            continue;
        }
        out[key] = {field(line, "bytes_received:"), field(line, "bytes_acked:")};
    }
    return true;
}

wire_delta wire_diff(const std::map<std::string, socket_bytes> &before,
                     const std::map<std::string, socket_bytes> &after) {
    wire_delta d;
    for (const auto &[k, b] : after) {
        const auto it         = before.find(k);
        const socket_bytes a0 = it == before.end() ? socket_bytes{} : it->second;
        d.from_guest += b.received - a0.received;
        d.to_guest += b.acked - a0.acked;
    }
    for (const auto &[k, b] : before) d.closed = d.closed || !after.count(k);
    return d;
}

std::pair<std::string, int> busiest_node(const std::string &base) {
    std::string body;
    std::pair<std::string, int> best{"", 0};
    if (http_get(base, "/api/ps", 5, &body) != 200) return best;
    const json j = json::parse(body, nullptr, false);
    std::map<std::string, int> per;
    if (j.is_object() && j.contains("sessions") && j["sessions"].is_array())
        for (const auto &s : j["sessions"])
            if (s.contains("node") && s["node"].is_string()) ++per[s["node"].get<std::string>()];
    for (const auto &[n, c] : per)
        if (c > best.second) best = {n, c};
    return best;
}

}  // namespace sf::bench
