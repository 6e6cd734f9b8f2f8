#include "cluster/cluster_head.h"

#include <cstdio>

#include "cluster/token_store.h"
#include "util/log.h"

namespace sf::cluster {

bool cluster_head::start(const std::string &state_dir, const std::string &host, int port,
                         node_pool &pool) {
    bool created = false;
    std::string err;
    if (!identity_.load_or_create(state_dir, created, err)) {
        SF_LOG_ERROR("cluster", "%s", err.c_str());
        return false;
    }
    port_ = std::make_unique<guest_port>(identity_, pool);
    if (!port_->start(host, port)) return false;
    if (created) {
        token_store store(identity_.dir());
        const std::string token = store.create(identity_.pin(), 1, 24 * 3600, err);
        if (token.empty()) {
            SF_LOG_ERROR("cluster", "%s", err.c_str());
            return false;
        }
        std::printf(
            "cluster created; join a guest (one use, valid 24 h) with:\n"
            "  superfluid join HEAD_ADDRESS:%d --token %s --model MODEL.gguf\n"
            "more tokens: superfluid token create --state-dir %s\n",
            port, token.c_str(), state_dir.c_str());
        std::fflush(stdout);
    }
    return true;
}

void cluster_head::stop() {
    if (port_) port_->stop();
    port_.reset();
}

int create_token_command(const std::string &state_dir, int uses, int64_t ttl_s) {
    head_identity id;
    std::string err;
    if (!id.load(state_dir, err)) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 1;
    }
    token_store store(id.dir());
    const std::string token = store.create(id.pin(), uses, ttl_s, err);
    if (token.empty()) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 1;
    }
    std::printf("%s\n", token.c_str());
    return 0;
}

}  // namespace sf::cluster
