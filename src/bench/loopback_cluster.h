// The `cluster` scenario's processes: a routing-only cluster head and its guests, all on
// 127.0.0.1 with state directories of their own; and the kernel's byte counts of the head's
// TCP connections to a guest's worker port.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_options.h"

namespace sf::bench {

/** One process group the scenario started: the head, or a guest (`join` and its worker). */
struct process_group {
    std::string name;
    pid_t pid = -1;
    std::string log;
    int worker_port = 0;  // guests: the port the head dials
};

/**
 * `serve MODEL --cluster --no-local-worker` and `join` guests on loopback, with the bench's
 * --ctx-size, --parallel and --threads on every node. Stops everything when destroyed.
 */
class loopback_cluster {
  public:
    /** `dir` holds the state directories and caches; the logs end as LOGS_PREFIX-NAME.log. */
    loopback_cluster(const bench_options &o, std::string dir, std::string logs_prefix);
    ~loopback_cluster();
    loopback_cluster(const loopback_cluster &)            = delete;
    loopback_cluster &operator=(const loopback_cluster &) = delete;

    /** Starts the head; returns the join token it prints on first start ("" and `err`). */
    std::string start_head(std::string &err);
    /** A new token for `uses` joins: `superfluid token create` on the head's state directory. */
    std::string create_token(int uses) const;
    /**
     * Starts guest `name`: `join` with `token`, a fresh state directory and worker port, and
     * `threads` inference threads (0: the engine's default).
     */
    void add_guest(const std::string &name, const std::string &token, int threads);
    /**
     * Waits until every running guest is `active` in GET /api/nodes, none of the stopped ones
     * is, and /health answers 200.
     */
    bool wait_active(double timeout_s, std::string &err);
    /** SIGKILLs guest `name`'s process group (join and worker): the kill's now_s(), 0: none. */
    double kill_guest(const std::string &name);
    /** Stops guest `name` (SIGTERM): its node leaves the cluster. */
    void stop_guest(const std::string &name);
    /** Stops every process (SIGTERM, SIGKILL after 15 s) and copies the logs. */
    void stop();

    /** The head's API, http://127.0.0.1:PORT. */
    const std::string &base_url() const { return base_; }
    /** The worker port of the first guest. */
    int worker_port() const { return guests_.empty() ? 0 : guests_.front().worker_port; }
    /** Peak RSS in MiB: head, guest_join and guest_worker (the largest over the guests). */
    nlohmann::json peak_rss() const;

  private:
    void add_engine_args(std::vector<std::string> &a, int threads) const;
    void sample_rss();

    const bench_options &o_;
    std::string dir_, logs_prefix_, base_;
    int guest_port_ = 0;
    process_group head_;
    std::vector<process_group> guests_;  // a stopped or killed one keeps its entry (pid -1)
    double rss_head_ = 0, rss_join_ = 0, rss_worker_ = 0;
};

/** The node running the most sessions now (GET /api/ps, sessions[].node) and their count. */
std::pair<std::string, int> busiest_node(const std::string &base);

/** TCP payload bytes of one socket, from the kernel (`ss -ti`: bytes_received, bytes_acked). */
struct socket_bytes {
    uint64_t received = 0, acked = 0;
};

/**
 * The established sockets whose peer port is `port` (the head's side of its connections to a
 * guest's worker port), keyed by local address; false when `ss` cannot be run.
 */
bool wire_snapshot(int port, std::map<std::string, socket_bytes> &out);

/** Bytes each way between two snapshots; `closed` when a socket of `before` went away. */
struct wire_delta {
    uint64_t from_guest = 0, to_guest = 0;
    bool closed = false;
};

/** What the sockets of `after` moved since `before` (a new socket counts from 0). */
wire_delta wire_diff(const std::map<std::string, socket_bytes> &before,
                     const std::map<std::string, socket_bytes> &after);

}  // namespace sf::bench
