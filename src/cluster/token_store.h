// The head's join tokens (issue #17): STATE/cluster/tokens.json, one entry per token: id, the
// derived key (join_token.h join_key, hex; never the secret), uses left, expiry (unix s).
// Every operation takes an flock on STATE/cluster/tokens.lock and rereads the file, so
// `superfluid token create` adds tokens while the head runs (the head reads the store at each
// Join) without talking to it. Writes go to a temporary file renamed over the store (0600).
// Thread-safe (the lock serializes processes and threads alike).
#pragma once

#include <cstdint>
#include <string>

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

  private:
    std::string dir_;
};

}  // namespace sf::cluster
