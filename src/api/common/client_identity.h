// Who sent a request, for fairness between clients within a class (issue #18) and for whose a
// session is: "key:" + a keyed hash of the API key, else "ua:" + one of the User-Agent, else
// "conn:" + the connection. The id is journaled, so the key itself is never kept, and the hash is
// HMAC-SHA256 under a secret of this state dir (STATE/client-id.key, 32 random bytes, 0600):
// the journal alone does not let anyone test guessed keys against it offline (issue #38 item 7;
// it was an unsalted FNV-1a). Plain functions, callable from any thread.
#pragma once

#include <string>
#include <string_view>

#include "api/common/priority.h"

namespace sf {

/**
 * The client id of a request with headers `h` on `connection` (the peer's address and port),
 * its hashes keyed with `secret` (load_identity_secret).
 */
std::string client_identity(const priority_headers &h, const std::string &connection,
                            std::string_view secret);

/**
 * The state dir's identity secret: read from `state_dir`/client-id.key, or made (32 bytes from
 * OpenSSL's CSPRNG) and written there 0600 when the file does not exist yet. An empty
 * `state_dir`: a fresh secret for this process alone. False with `error` when the file cannot
 * be read or written, or is not 32 bytes.
 */
bool load_identity_secret(const std::string &state_dir, std::string &secret, std::string &error);

}  // namespace sf
