// API keys as the server checks them: the key a request carries, and a set of keys that tells
// whether it holds one in time that depends on neither the key nor the set (SHA-256 digests
// compared with CRYPTO_memcmp, every key compared), so a client learns no key's bytes or length
// from how long a refusal takes. Immutable after construction: any thread may call it.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace httplib {
struct Request;
}

namespace sf {

/** The key a request carries, as api_key() (api/common/priority.h) reads it from its headers. */
std::string request_key(const httplib::Request &req);

class key_set {
  public:
    key_set() = default;
    /** The set of `keys` (only their digests are kept). */
    explicit key_set(const std::vector<std::string> &keys);
    /** True when `key` is one of the set's, in constant time. */
    bool contains(const std::string &key) const;
    bool empty() const { return digests_.empty(); }

  private:
    std::vector<std::array<unsigned char, 32>> digests_;
};

}  // namespace sf
