// The head's cluster mode (`serve --cluster`, issue #17): loads or creates the identity in
// STATE/cluster (head_identity.h), prints a join token on first start (one use, 24 h), and
// serves the guest port (guest_port.h) that adds guests to the node pool.
// Threads: start/stop from the serve thread; the port's handlers run on gRPC threads.
#pragma once

#include <memory>
#include <string>

#include "cluster/guest_port.h"
#include "cluster/head_identity.h"
#include "placement/node_pool.h"

namespace sf::cluster {

class cluster_head {
  public:
    /**
     * Sets up the identity and listens on `host`:`port` for guests, adding them to `pool`
     * (which must outlive this object). False with a logged reason when it cannot.
     */
    bool start(const std::string &state_dir, const std::string &host, int port, node_pool &pool);
    void stop();
    ~cluster_head() { stop(); }

  private:
    head_identity identity_;
    std::unique_ptr<guest_port> port_;
};

/**
 * `superfluid token create`: a join token for the head whose state is `state_dir` (its
 * identity must exist), usable `uses` times for `ttl_s` seconds (0: no expiry). Written to the
 * token store under its own lock, so the running head sees it at the next join.
 */
int create_token_command(const std::string &state_dir, int uses, int64_t ttl_s);

}  // namespace sf::cluster
