// One server under test: started and stopped by the bench (Superfluid, llama-server) or an
// external URL. Samples the peak RSS of its processes by role while it runs.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace sf::bench {

enum class server_kind { superfluid, llama_server, external };

/** How to run one server. */
struct server_spec {
    server_kind kind = server_kind::external;
    std::string name;     // "superfluid", "llama-server", or the URL
    std::string binary;   // superfluid / llama-server executable
    std::string model;    // GGUF path
    std::string url;      // external only
    int ctx_size = 8192;  // per sequence
    int parallel = 8;
    int threads  = 0;
    std::vector<std::string> args;  // more `superfluid serve` flags (bench --standby, --spec-*)
    std::vector<std::string> peer_args;  // more llama-server flags (bench --spec-*)
};

/** A server the scenarios talk to; never two engines at once (the bench runs them in turn). */
class server_runner {
  public:
    /** `work_dir` holds the state directory and the server log. */
    server_runner(server_spec spec, std::string work_dir);
    ~server_runner();
    server_runner(const server_runner &)            = delete;
    server_runner &operator=(const server_runner &) = delete;

    /** Starts the server and waits for GET /health 200 (external: checks it answers). */
    bool start(std::string &error);
    /** Stops it (SIGTERM, then SIGKILL after 15 s). No-op for an external server. */
    void stop();
    /** Stop + start on the same port and state directory. */
    bool restart(std::string &error);
    /**
     * SIGKILLs the inference process: Superfluid's worker (the head restarts it), or the whole
     * llama-server, which is then started again at once on the same port (as a supervisor
     * would). Returns false when there is nothing to kill (external server).
     */
    bool kill_engine(std::string &error);
    /**
     * SIGKILLs the head (Superfluid; its worker follows it, by its parent-death signal, or is
     * killed after 10 s) or the whole llama-server, then starts it again on the same port and
     * state directory (the journal's sessions resume there) and waits for /health.
     */
    bool kill_head(std::string &error);
    /** Extra `serve` flags for the next start (Superfluid only; e.g. the journal mode). */
    void set_extra_args(std::vector<std::string> args) { extra_args_ = std::move(args); }
    /** True when the bench controls the processes (restart, kill). */
    bool controlled() const { return spec_.kind != server_kind::external; }
    /** Waits for GET /health 200 for at most `timeout_s`. */
    bool wait_healthy(double timeout_s);
    /**
     * After a start: waits until the server's processes have used under 5 % of a core for
     * 2.5 s in a row (at most `timeout_s`), so that loading work that follows /health (our hot
     * standby worker loads 2 s after the worker is ready; llama-server's warm-up) does not fall
     * into the first measurements. False on timeout (measured anyway).
     */
    bool wait_settled(double timeout_s);

    const server_spec &spec() const { return spec_; }
    std::string base_url() const { return base_url_; }
    /** Peak RSS in MiB per process role ("head"/"worker" or "server") since construction. */
    nlohmann::json peak_rss_mib() const;
    /** The pids this runner owns now (head and its children). */
    std::vector<pid_t> own_pids() const;
    /** Path of the server's log file. */
    std::string log_path() const { return work_dir_ + "/server.log"; }

  private:
    std::vector<std::string> argv() const;
    void sample_loop();
    void sample_once();

    server_spec spec_;
    std::vector<std::string> extra_args_;
    std::string work_dir_;
    std::string base_url_;
    int port_ = 0;
    std::atomic<pid_t> pid_{-1};
    mutable std::mutex mu_;
    std::map<std::string, double> peak_;
    std::atomic<bool> sampling_{false};
    std::thread sampler_;
};

}  // namespace sf::bench
