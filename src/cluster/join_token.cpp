#include "cluster/join_token.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>

#include "cluster/x509.h"

namespace sf::cluster {

static bool is_hex(const std::string &s, size_t len) {
    return s.size() == len && std::all_of(s.begin(), s.end(), [](unsigned char c) {
               return std::isdigit(c) || (c >= 'a' && c <= 'f');
           });
}

bool parse_join_token(const std::string &text, join_token &out, std::string &error) {
    std::string parts[4];
    size_t start = 0;
    for (int i = 0; i < 4; ++i) {
        size_t dot = i < 3 ? text.find('.', start) : std::string::npos;
        if (i < 3 && dot == std::string::npos) break;
        parts[i] = text.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        start    = dot + 1;
    }
    if (parts[0] != "sf1") return error = "not a Superfluid join token (sf1.…)", false;
    if (!is_hex(parts[1], 64)) return error = "the token's CA hash is not 64 hex digits", false;
    if (!is_hex(parts[2], 12)) return error = "the token's id is not 12 hex digits", false;
    if (!is_hex(parts[3], 32)) return error = "the token's secret is not 32 hex digits", false;
    out = {parts[1], parts[2], parts[3]};
    return true;
}

std::string format_join_token(const join_token &t) {
    return "sf1." + t.pin + "." + t.id + "." + t.secret;
}

join_token new_join_token(const std::string &pin) {
    return {pin, to_hex(random_bytes(6)), to_hex(random_bytes(16))};
}

std::string join_key(const std::string &secret) {
    return sha256("sf1-join-key" + secret);
}

std::string join_proof(const std::string &key, const std::string &nonce, const std::string &pin,
                       const std::string &csr_pem) {
    return hmac_sha256(key, "sf1-join" + nonce + pin + csr_pem);
}

bool same_bytes(const std::string &a, const std::string &b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace sf::cluster
