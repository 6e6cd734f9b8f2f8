#include "api/common/client_identity.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/file_text.h"

namespace sf {

namespace {

constexpr size_t k_secret_bytes = 32;

// The first 16 bytes of HMAC-SHA256(secret, text), as 32 hex digits: ample for an id, and
// useless to a guesser without the secret.
std::string keyed_hex(std::string_view secret, std::string_view text) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char *>(text.data()), text.size(), mac, &n);
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < 16 && i < n; ++i) {
        out += digits[mac[i] >> 4];
        out += digits[mac[i] & 15];
    }
    return out;
}

}  // namespace

std::string client_identity(const priority_headers &h, const std::string &connection,
                            std::string_view secret) {
    if (const std::string key = api_key(h); !key.empty()) return "key:" + keyed_hex(secret, key);
    if (!h.user_agent.empty()) return "ua:" + keyed_hex(secret, h.user_agent);
    return "conn:" + connection;
}

bool load_identity_secret(const std::string &state_dir, std::string &secret, std::string &error) {
    unsigned char fresh[k_secret_bytes];
    if (state_dir.empty()) {
        if (RAND_bytes(fresh, sizeof fresh) != 1) {
            error = "no random bytes for the client-id secret";
            return false;
        }
        secret.assign(reinterpret_cast<const char *>(fresh), sizeof fresh);
        return true;
    }
    const std::string path = state_dir + "/client-id.key";
    // O_EXCL: made once; every later start (and a racing one) reads what the first wrote.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        bool ok = RAND_bytes(fresh, sizeof fresh) == 1 &&
                  ::write(fd, fresh, sizeof fresh) == static_cast<ssize_t>(sizeof fresh) &&
                  ::fsync(fd) == 0;
        ::close(fd);
        if (!ok) {
            ::unlink(path.c_str());
            error = "cannot write " + path;
            return false;
        }
        secret.assign(reinterpret_cast<const char *>(fresh), sizeof fresh);
        return true;
    }
    if (errno != EEXIST) {
        error = "cannot create " + path + ": " + std::strerror(errno);
        return false;
    }
    if (!read_file(path, secret) || secret.size() != k_secret_bytes) {
        error = path + " is not a " + std::to_string(k_secret_bytes) +
                "-byte secret (remove it to make a new one; journaled client ids change then)";
        return false;
    }
    ::chmod(path.c_str(), 0600);  // one an older umask left readable
    return true;
}

}  // namespace sf
