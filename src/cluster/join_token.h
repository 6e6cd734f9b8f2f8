// Join tokens (issue #17): `sf1.<pin>.<id>.<secret>`, after kubeadm/k3s. `pin` is the SHA-256
// (64 hex) of the head CA's public key (x509.h public_key_pin): the guest trusts a head only
// if its CA hashes to it. `id` (12 hex) names the token in the head's store; `secret` (32 hex)
// never leaves the guest: it proves it with an HMAC bound to a fresh nonce from the head and to
// its certificate request, so a captured join cannot be replayed (the nonce is single-use) or
// reused for another key. The head stores only the derived key (join_key), never the secret.
// Plain functions.
#pragma once

#include <string>

namespace sf::cluster {

struct join_token {
    std::string pin;     // 64 hex
    std::string id;      // 12 hex
    std::string secret;  // 32 hex
};

/** Parses `text`; false with `error` naming what is malformed. */
bool parse_join_token(const std::string &text, join_token &out, std::string &error);
/** The token's text form. */
std::string format_join_token(const join_token &t);
/** A new token for CA pin `pin` (random id and secret). */
join_token new_join_token(const std::string &pin);

/** The key the head stores for a secret: SHA-256("sf1-join-key" || secret), raw bytes. */
std::string join_key(const std::string &secret);
/**
 * The proof a Join carries: HMAC-SHA256(key, "sf1-join" || nonce || pin || csr_pem), raw bytes.
 */
std::string join_proof(const std::string &key, const std::string &nonce, const std::string &pin,
                       const std::string &csr_pem);
/** Constant-time equality of two byte strings. */
bool same_bytes(const std::string &a, const std::string &b);

}  // namespace sf::cluster
