// The guest's half of joining (issue #17), against the head's guest port (guest_port.h):
//  1. GetCA over TLS without verifying the head (nothing secret is sent on this connection);
//  2. the CA's public-key hash must equal the token's pin, else stop: nothing else is sent;
//  3. over a new TLS connection that verifies the head's certificate against that CA:
//     Challenge (a fresh nonce), then Join with a new key's CSR and the proof
//     HMAC(join_key(secret), "sf1-join" || nonce || pin || csr) — the secret never travels;
//  4. the node certificate must be signed by the CA; key, certificate and CA are stored.
// Later, register() presents that certificate (mutual TLS) instead of the token.
// Plain functions; blocking (deadlines of a few seconds).
#pragma once

#include <grpcpp/channel.h>

#include <memory>
#include <string>

namespace sf::cluster {

/**
 * A gRPC channel to the head's guest port `head` (host:port) that verifies the head's
 * certificate against `ca_pem` and, given a key and certificate, presents them (mTLS).
 */
std::shared_ptr<grpc::Channel> head_channel(const std::string &head, const std::string &ca_pem,
                                            const std::string &key_pem  = "",
                                            const std::string &cert_pem = "");

/** What a joined guest keeps in STATE/node/ (key 0600). */
struct node_credentials {
    std::string name;
    std::string ca_pem, key_pem, cert_pem;
};

/** Loads STATE/node's credentials; false when the guest has not joined yet. */
bool load_node_credentials(const std::string &state_dir, node_credentials &out);

/**
 * Joins the head at `head` (host:port) with join token `token`, asking for node name `name`;
 * stores the credentials under `state_dir` and returns them. False with `error` (a wrong pin
 * says so before anything secret was sent).
 */
bool join_cluster(const std::string &head, const std::string &token, const std::string &name,
                  const std::string &state_dir, node_credentials &out, std::string &error);

/** The head's answer to a registration. */
struct register_result {
    bool reached                                     = false;  // the call completed
    enum class state { PENDING, ACTIVE, REFUSED } st = state::PENDING;
    std::string message;  // why, when refused or unreachable
};

/**
 * Announces this guest's worker (port, optional advertised host) to the head, with mTLS.
 * `leaving`: the guest is stopping; when the call returns reached, the head has dropped the
 * node and moved its sessions to other nodes.
 */
register_result register_node(const std::string &head, const node_credentials &creds,
                              int worker_port, const std::string &advertise_host,
                              bool leaving = false);

}  // namespace sf::cluster
