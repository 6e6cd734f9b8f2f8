// The head's join tokens (issue #17): STATE/cluster/tokens.json, one entry per token: id, the
// derived key (join_token.h join_key, hex; never the secret), uses left, expiry (unix s),
// whether it was revoked; plus `joins` (node name, certificate serial, token id: who joined
// with what) and `revoked` (node name, certificate serial, unix time: `nodes revoke`).
// Every operation takes an flock on STATE/cluster/tokens.lock and rereads the file, so
// `superfluid token create` adds tokens while the head runs (the head reads the store at each
// Join) without talking to it. Writes go to a temporary file renamed over the store (0600).
// Thread-safe (the lock serializes processes and threads alike).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sf::cluster {

class token_store {
  public:
    /** `dir`: STATE/cluster (must exist). */
    explicit token_store(std::string dir) : dir_(std::move(dir)) {}

    /**
     * Stores a new token for CA pin `pin` usable `uses` times until now + `ttl_s` seconds
     * (ttl_s 0: never expires). Returns its text (sf1.…), or "" with `error`.
     */
    std::string create(const std::string &pin, int uses, int64_t ttl_s, std::string &error);

    /**
     * A Join's check: the token `id` exists, has a use left, has not expired, and `proof` is
     * join_proof(key, nonce, pin, csr_pem) for its key. On success one use is taken. False with
     * `error` (for the log; the guest is told less) otherwise.
     */
    bool redeem(const std::string &id, const std::string &nonce, const std::string &pin,
                const std::string &csr_pem, const std::string &proof, std::string &error);

    /** Records that node `node` joined with token `id` and got certificate `serial` (hex). */
    void record_join(const std::string &id, const std::string &node, const std::string &serial);

    /**
     * Revokes node `node`'s certificate `serial` (hex, from STATE/cluster/nodes/NODE.crt) and
     * the token it joined with (when a join was recorded): from then on the certificate's
     * Register and the token's Join are refused. Sets `token_id` ("" when unknown). False with
     * `error` when the store cannot be written.
     */
    bool revoke(const std::string &node, const std::string &serial, std::string &token_id,
                std::string &error);

    /** True when certificate `serial` (hex) was revoked. */
    bool revoked(const std::string &serial);

    /** Every revoked certificate as (node name, serial hex). */
    std::vector<std::pair<std::string, std::string>> revoked_nodes();

    /** STATE/cluster/tokens.json: its modification changes when a token or revocation does. */
    std::string path() const { return dir_ + "/tokens.json"; }

  private:
    std::string dir_;
};

}  // namespace sf::cluster
