// The head's guest port (issue #17; proto/cluster.proto): TLS with the head's certificate (its
// chain includes the CA), a client certificate requested and, when sent, verified against the
// CA. GetCA and Challenge are open; Join redeems a join token (token_store.h) and issues a node
// certificate; GetModel streams the head's model file to a node (model_transfer.h); Register
// needs a node certificate and adds the guest's worker to the node pool
// (node_pool.h; the head dials it: remote_worker.h). Nothing else is served here: no public
// API, no worker protocol.
//
// Threads: gRPC's handler threads call the service concurrently; nonces_mu_ guards the
// outstanding nonces; the identity is read-only; the token store and pool are thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cluster.grpc.pb.h"
#include "cluster/head_identity.h"
#include "cluster/model_transfer.h"
#include "cluster/token_store.h"
#include "placement/node_pool.h"
#include "placement/remote_worker.h"

namespace sf::cluster {

class guest_port final : public superfluid::cluster::v1::Cluster::Service {
  public:
    /** `identity` and `pool` must outlive the port; `model_path`: the file GetModel serves. */
    guest_port(head_identity &identity, node_pool &pool, const std::string &model_path = "");
    ~guest_port() override;

    /** Listens on `host`:`port`; false when it cannot. */
    bool start(const std::string &host, int port);
    void stop();

    grpc::Status GetCA(grpc::ServerContext *, const superfluid::cluster::v1::GetCARequest *,
                       superfluid::cluster::v1::GetCAReply *reply) override;
    grpc::Status Challenge(grpc::ServerContext *ctx,
                           const superfluid::cluster::v1::ChallengeRequest *,
                           superfluid::cluster::v1::ChallengeReply *reply) override;
    grpc::Status Join(grpc::ServerContext *ctx, const superfluid::cluster::v1::JoinRequest *req,
                      superfluid::cluster::v1::JoinReply *reply) override;
    grpc::Status Register(grpc::ServerContext *ctx,
                          const superfluid::cluster::v1::RegisterRequest *req,
                          superfluid::cluster::v1::RegisterReply *reply) override;
    grpc::Status GetModel(grpc::ServerContext *ctx,
                          const superfluid::cluster::v1::GetModelRequest *req,
                          grpc::ServerWriter<superfluid::cluster::v1::ModelChunk> *w) override;

  private:
    // The verified client certificate's CN, or "" when the caller sent none.
    static std::string peer_node(grpc::ServerContext *ctx);
    // The verified client certificate's serial (hex), or "".
    static std::string peer_serial(grpc::ServerContext *ctx);
    // The caller's IP address from ctx->peer() ("ipv4:10.0.0.2:4711" → "10.0.0.2").
    static std::string peer_host(grpc::ServerContext *ctx);
    // Takes a nonce if outstanding and fresh (each is usable once).
    bool take_nonce(const std::string &nonce);
    std::string unique_name(const std::string &asked);

    head_identity &identity_;
    node_pool &pool_;
    token_store tokens_;
    tls_identity dial_tls_;
    std::mutex nonces_mu_;
    std::map<std::string, std::chrono::steady_clock::time_point> nonces_;  // nonce → expiry
    model_source model_;
    std::unique_ptr<grpc::Server> server_;
};

}  // namespace sf::cluster
