#include "cluster/cluster_head.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "cluster/token_store.h"
#include "cluster/x509.h"
#include "util/file_text.h"
#include "util/log.h"

namespace sf::cluster {

bool cluster_head::start(const std::string &state_dir, const std::string &host, int port,
                         node_pool &pool, const std::string &model_path) {
    bool created = false;
    std::string err;
    if (!identity_.load_or_create(state_dir, created, err)) {
        SF_LOG_ERROR("cluster", "%s", err.c_str());
        return false;
    }
    port_ = std::make_unique<guest_port>(identity_, pool, model_path);
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
    watcher_ = std::thread([this, &pool] { watch_revocations(pool); });
    return true;
}

void cluster_head::watch_revocations(node_pool &pool) {
    token_store store(identity_.dir());
    struct timespec seen {};
    std::unique_lock lk(mu_);
    while (!stop_) {
        lk.unlock();
        struct stat st {};
        if (::stat(store.path().c_str(), &st) == 0 &&
            (st.st_mtim.tv_sec != seen.tv_sec || st.st_mtim.tv_nsec != seen.tv_nsec)) {
            seen = st.st_mtim;
            for (const auto &[name, serial] : store.revoked_nodes())
                pool.revoke(name, serial,
                            "revoked on the head (certificate serial " + serial + ")");
        }
        lk.lock();
        cv_.wait_for(lk, std::chrono::milliseconds(250), [&] { return stop_; });
    }
}

void cluster_head::stop() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (watcher_.joinable()) watcher_.join();
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

int revoke_node_command(const std::string &state_dir, const std::string &name) {
    head_identity id;
    std::string err;
    if (!id.load(state_dir, err)) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 1;
    }
    // The head keeps each issued certificate as STATE/cluster/nodes/NAME.crt (guest_port Join).
    const std::string cert_path = id.dir() + "/nodes/" + name + ".crt";
    std::string pem;
    if (name.find('/') != std::string::npos || !read_file(cert_path, pem)) {
        std::fprintf(stderr, "no node named %s has joined this head (no %s)\n", name.c_str(),
                     cert_path.c_str());
        return 1;
    }
    const std::string serial = serial_hex(pem);
    token_store store(id.dir());
    std::string token;
    if (!store.revoke(name, serial, token, err)) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 1;
    }
    std::printf(
        "revoked node %s (certificate serial %s%s%s); a running head drops it within a "
        "second and its sessions move to other nodes\n",
        name.c_str(), serial.c_str(), token.empty() ? "" : ", token ", token.c_str());
    return 0;
}

}  // namespace sf::cluster
