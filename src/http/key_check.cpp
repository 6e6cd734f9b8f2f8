#include "http/key_check.h"

#include <cpp-httplib/httplib.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "api/common/priority.h"

namespace sf {

namespace {

std::array<unsigned char, 32> digest_of(const std::string &key) {
    std::array<unsigned char, 32> d{};
    SHA256(reinterpret_cast<const unsigned char *>(key.data()), key.size(), d.data());
    return d;
}

}  // namespace

std::string request_key(const httplib::Request &req) {
    priority_headers h;
    h.authorization = req.get_header_value("Authorization");
    h.x_api_key     = req.get_header_value("x-api-key");
    return api_key(h);
}

key_set::key_set(const std::vector<std::string> &keys) {
    for (const auto &k : keys) digests_.push_back(digest_of(k));
}

bool key_set::contains(const std::string &key) const {
    const auto d = digest_of(key);
    bool found   = false;
    for (const auto &k : digests_) found |= CRYPTO_memcmp(k.data(), d.data(), d.size()) == 0;
    return found;
}

}  // namespace sf
