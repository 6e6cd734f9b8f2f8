#include "session/retry_index.h"

#include <openssl/evp.h>

#include <cstdio>

#include "protocol/request_codec.h"

namespace sf {

std::string retry_index::key(const worker_submission &sub, bool client_seeded) {
    worker_submission k = sub;
    k.session_id.clear();
    k.epoch = 0;
    k.resume_tokens.clear();
    k.has_parse = false;
    k.request.retry_key.clear();
    if (!client_seeded) k.request.sampling.seed = 0;
    std::string bytes = k.request.api + '\0' + k.request.model + '\0';
    bytes += protocol::encode_submission(k);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1) return "";
    std::string hex(2 * n, '0');
    for (unsigned int i = 0; i < n; ++i) snprintf(&hex[2 * i], 3, "%02x", md[i]);
    return hex;
}

void retry_index::offer(const std::string &key, const std::shared_ptr<session> &s) {
    if (key.empty()) return;
    std::lock_guard lk(mu_);
    offers_.emplace(key, offer_t{s, std::chrono::steady_clock::now() + window_});
}

std::shared_ptr<session> retry_index::take(const std::string &key) {
    if (key.empty()) return nullptr;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lk(mu_);
    // Expired, finished or gone offers are dropped as they are met.
    for (auto it = offers_.begin(); it != offers_.end();) {
        const auto &s = it->second.s;
        std::vector<session_event> none;
        std::optional<session_event> fin;
        if (s->finished()) s->read(s->token_count(), none, fin, std::chrono::milliseconds(0));
        const bool failed =
            fin && fin->reason != finish_reason::STOP && fin->reason != finish_reason::LENGTH;
        if (failed || it->second.until < now) {
            it = offers_.erase(it);
            continue;
        }
        if (it->first == key) {
            auto taken = s;
            offers_.erase(it);
            return taken;
        }
        ++it;
    }
    return nullptr;
}

}  // namespace sf
