#include "session/cache_scope.h"

#include <openssl/evp.h>

#include <cstdio>

namespace sf {

std::string make_cache_scope(std::string_view salt, std::string_view key_id) {
    if (salt.empty() && key_id.empty()) return "";
    // Length-prefixed parts: ("ab", "c") and ("a", "bc") are different scopes.
    std::string bytes = "sf-cache-scope:" + std::to_string(key_id.size()) + ":";
    bytes.append(key_id);
    bytes += ":" + std::to_string(salt.size()) + ":";
    bytes.append(salt);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1 || n < 8)
        return "ffffffffffffffff";  // still scoped: never shared with unscoped requests
    char hex[17];
    for (int i = 0; i < 8; ++i) std::snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return std::string(hex, 16);
}

}  // namespace sf
