// The head's cluster mode (`serve --cluster`, issue #17): loads or creates the identity in
// STATE/cluster (head_identity.h), prints a join token on first start (one use, 24 h), and
// serves the guest port (guest_port.h) that adds guests to the node pool, and watches the
// token store for revocations (`superfluid nodes revoke`, another process): a revoked node is
// dropped from the pool within 250 ms.
// Threads: start/stop from the serve thread; the port's handlers run on gRPC threads; the
// revocation watcher runs on its own thread (it only reads the store and calls the pool).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster/guest_port.h"
#include "cluster/head_identity.h"
#include "placement/node_pool.h"

namespace sf::cluster {

class cluster_head {
  public:
    /**
     * Sets up the identity and listens on `host`:`port` for guests, adding them to `pool`
     * (which must outlive this object); guests started without --model get `model_path`
     * (GetModel). False with a logged reason when it cannot.
     */
    bool start(const std::string &state_dir, const std::string &host, int port, node_pool &pool,
               const std::string &model_path = "");
    void stop();
    ~cluster_head() { stop(); }

  private:
    // Every 250 ms: when tokens.json changed, drops each revoked node from the pool.
    void watch_revocations(node_pool &pool);

    head_identity identity_;
    std::unique_ptr<guest_port> port_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread watcher_;
};

/**
 * `superfluid token create`: a join token for the head whose state is `state_dir` (its
 * identity must exist), usable `uses` times for `ttl_s` seconds (0: no expiry). Written to the
 * token store under its own lock, so the running head sees it at the next join.
 */
int create_token_command(const std::string &state_dir, int uses, int64_t ttl_s);

/**
 * `superfluid nodes revoke NAME`: revokes the certificate the head at `state_dir` issued to
 * node NAME (STATE/cluster/nodes/NAME.crt) and the token it joined with. The running head
 * drops the node within a second (its sessions move); its Register and the token's Joins are
 * refused from then on. Returns the exit code (1 with a message when NAME never joined).
 */
int revoke_node_command(const std::string &state_dir, const std::string &name);

}  // namespace sf::cluster
