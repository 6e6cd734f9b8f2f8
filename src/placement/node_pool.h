// Many workers as one worker_client (issue #17): the head's own worker and the guests' (each a
// worker_client of its own: local_worker, remote_worker) behind the interface the session layer
// already speaks. submit() places a whole session on the node where it starts soonest
// (placement_policy.h), skipping nodes that are pending, refused or failing; a lost node's
// Events stream ends, the relay marks its sessions lost, and the resumer's next submit() lands
// on another node (the existing resume path, new epoch). Stream ids carry their node: each node
// gets its own stream_base (a multiple of 2^40), so stream_open() finds the node by id.
//
// Placement weighs prefix affinity: the pool records each placed session's prefix_chain per
// node (prefix_affinity.h), so a conversation's next turn goes back to the node whose prefix
// cache holds its earlier turns while that node has a free slot.
//
// A node is `pending` until it answers Health ready and its tokenizer fingerprint matches the
// reference (the local worker's, or with --no-local-worker the first node verified); a node
// whose tokenizer differs is `refused` and stopped. A guest whose Events stream ends is pending
// again until it is checked afresh (it may come back with another model).
//
// Threads: every method is thread-safe. Nodes' events threads call the listener through
// on_events/on_stream_lost, serialized by listener_mu_ (the relay sees one caller at a time).
// mu_ guards the node table and the session → node map; it is never held while calling into a
// node client or the listener. The monitor thread polls nodes' health every 500 ms.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "placement/prefix_affinity.h"
#include "session/worker_client.h"

namespace sf {

class node_pool final : public worker_client, private worker_listener {
  public:
    /** Makes a node's client given its stream base. */
    using factory = std::function<std::unique_ptr<worker_client>(uint64_t stream_base)>;

    node_pool() = default;
    ~node_pool() override;

    /**
     * Adds node `name` at `address` (the local worker: name "local", address ""). A node of the
     * same name and address is kept as it is (a guest's heartbeat); another address replaces
     * it (the old client is stopped: its sessions are lost and resumed). `reference`: this
     * node's tokenizer is the cluster's (the local worker).
     */
    void add_node(const std::string &name, const std::string &address, factory make,
                  bool reference = false);
    /**
     * Node `name` as reported (state pending | active | failing | refused), or a report with
     * an empty name when unknown. Marks it seen now and keeps its certificate serial. A refused
     * node is forgotten after this report, so a guest restarted with another model is checked
     * afresh.
     */
    node_report heartbeat(const std::string &name, const std::string &certificate_serial = "");
    /**
     * Drops node `name` for good (`superfluid nodes revoke`): it is refused with `why`, its
     * client stopped, so its Events stream ends and its sessions resume on other nodes. When
     * `serial` is not empty only the node holding that certificate serial is dropped. False
     * when no such node is in the table (already gone, or a newer certificate).
     */
    bool revoke(const std::string &name, const std::string &serial, const std::string &why);

    /**
     * Node `name` (holding certificate `serial`, when not empty) says it is stopping: it is
     * dropped from the table and its client stopped, so its sessions move to other nodes now.
     * Its next registration (a restart) adds it afresh. False when no such guest is listed.
     */
    bool leave(const std::string &name, const std::string &serial);

    /**
     * How long a guest may stay unreachable (no answer, no registration) before it is shown
     * `lost` with the reason; default 3 min. A lost node is never placed on, and a revoke
     * drops it from the table at once. Call before start().
     */
    void set_lost_after(std::chrono::seconds s) { lost_after_ = s; }

    void set_listener(worker_listener *l) override { listener_ = l; }
    bool start() override;
    void stop() override;
    bool submit(const worker_submission &sub, accepted_session &acc, start_error &err) override;
    void cancel(const std::string &session_id, uint64_t epoch) override;
    bool stream_open(uint64_t stream) override;
    bool render(const worker_submission &sub, accepted_session &acc, start_error &err) override;
    bool embed(const embed_batch &job, std::vector<embedding> &out, start_error &err) override;
    bool model_info(model_description &out) override;
    worker_health health() override;
    counters stats() override;
    std::vector<node_report> nodes() override;
    std::string session_node(const std::string &session_id) override;

  private:
    enum class node_state { PENDING, ACTIVE, REFUSED };
    struct node {
        std::string name, address;
        std::unique_ptr<worker_client> client;
        uint64_t base  = 0;
        bool reference = false;
        node_state st  = node_state::PENDING;
        std::string message, model_fp, tokenizer_fp, serial, engine;
        worker_health last;  // the monitor's last poll
        std::chrono::steady_clock::time_point last_seen{};
        bool seen             = false;
        uint64_t placed_total = 0;
        int32_t submitting    = 0;  // submits in flight to it (counted as running when placing)
    };
    struct placement {
        uint64_t base  = 0;
        uint64_t epoch = 0;
    };
    static constexpr int k_stream_shift = 40;

    // worker_listener, from the nodes' events threads
    void on_events(uint64_t stream, std::vector<worker_event> &batch) override;
    void on_stream_lost(uint64_t stream) override;

    void monitor();
    // Polls one node; verifies a pending one. Called on the monitor thread, mu_ not held.
    void poll(const std::shared_ptr<node> &n);
    std::shared_ptr<node> by_stream(uint64_t stream);
    // Usable nodes in table order (mu_ held).
    bool usable(const node &n) const;
    // Nodes usable for a call other than submit, the local worker first (takes mu_).
    std::vector<std::shared_ptr<node>> usable_nodes();
    // Stops a client outside mu_ (its threads may call back into the pool).
    static void retire(std::shared_ptr<node> n);

    worker_listener *listener_ = nullptr;
    std::mutex listener_mu_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool started_ = false, stop_ = false;
    uint64_t next_base_ = 0;
    std::vector<std::shared_ptr<node>> nodes_;
    std::map<std::string, placement> placed_;  // session id → its current node and epoch
    // Finishes that arrived before their submit returned (session id → epoch); bounded.
    std::map<std::string, uint64_t> finished_early_;
    std::string reference_fp_;  // the cluster's tokenizer fingerprint
    affinity_index affinity_;   // which node was given which request prefixes (mu_)
    std::thread monitor_thread_;
    std::chrono::seconds lost_after_{180};
    // Lost: a guest unreachable for lost_after_ since it last answered (mu_ held).
    bool lost(const node &n, std::chrono::steady_clock::time_point now) const {
        return !n.reference && n.seen && !n.last.reachable && now - n.last_seen > lost_after_;
    }
};

}  // namespace sf
