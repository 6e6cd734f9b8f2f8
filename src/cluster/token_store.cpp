#include "cluster/token_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cluster/join_token.h"
#include "cluster/x509.h"
#include "util/file_text.h"

namespace sf::cluster {

namespace {

// Holds STATE/cluster/tokens.lock (flock) for its life.
class file_lock {
  public:
    explicit file_lock(const std::string &path) {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd_ >= 0) flock(fd_, LOCK_EX);
    }
    ~file_lock() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool ok() const { return fd_ >= 0; }

  private:
    int fd_ = -1;
};

nlohmann::json load(const std::string &path) {
    std::ifstream f(path);
    if (!f) return {{"tokens", nlohmann::json::array()}};
    auto j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded() || !j.contains("tokens")) return {{"tokens", nlohmann::json::array()}};
    return j;
}

bool save(const std::string &path, const nlohmann::json &j) {
    return write_file_atomic(path, j.dump(2) + "\n", 0600);
}

std::string from_hex(const std::string &hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

}  // namespace

std::string token_store::create(const std::string &pin, int uses, int64_t ttl_s,
                                std::string &error) {
    file_lock lock(dir_ + "/tokens.lock");
    if (!lock.ok()) return error = "cannot lock " + dir_ + "/tokens.lock", "";
    const std::string path = dir_ + "/tokens.json";
    nlohmann::json j       = load(path);
    const join_token t     = new_join_token(pin);
    const int64_t now      = static_cast<int64_t>(std::time(nullptr));
    j["tokens"].push_back({{"id", t.id},
                           {"key", to_hex(join_key(t.secret))},
                           {"uses_left", uses},
                           {"created", now},
                           {"expires", ttl_s > 0 ? now + ttl_s : 0}});
    if (!save(path, j)) return error = "cannot write " + path, "";
    return format_join_token(t);
}

bool token_store::redeem(const std::string &id, const std::string &nonce, const std::string &pin,
                         const std::string &csr_pem, const std::string &proof, std::string &error) {
    file_lock lock(dir_ + "/tokens.lock");
    if (!lock.ok()) return error = "cannot lock the token store", false;
    const std::string path = dir_ + "/tokens.json";
    nlohmann::json j       = load(path);
    const int64_t now      = static_cast<int64_t>(std::time(nullptr));
    for (auto &t : j["tokens"]) {
        if (t.value("id", "") != id) continue;
        const std::string key = from_hex(t.value("key", ""));
        if (!same_bytes(join_proof(key, nonce, pin, csr_pem), proof))
            return error = "token " + id + ": wrong secret (the proof does not verify)", false;
        if (t.value("revoked", false)) return error = "token " + id + ": revoked", false;
        const int64_t expires = t.value("expires", int64_t{0});
        if (expires != 0 && now >= expires) return error = "token " + id + ": expired", false;
        const int uses = t.value("uses_left", 0);
        if (uses <= 0) return error = "token " + id + ": already used", false;
        t["uses_left"] = uses - 1;
        if (!save(path, j)) return error = "cannot write " + path, false;
        return true;
    }
    return error = "token " + id + ": unknown", false;
}

void token_store::record_join(const std::string &id, const std::string &node,
                              const std::string &serial) {
    file_lock lock(dir_ + "/tokens.lock");
    if (!lock.ok()) return;
    nlohmann::json j = load(path());
    j["joins"].push_back({{"node", node},
                          {"serial", serial},
                          {"token", id},
                          {"at", static_cast<int64_t>(std::time(nullptr))}});
    save(path(), j);
}

bool token_store::revoke(const std::string &node, const std::string &serial, std::string &token_id,
                         std::string &error) {
    file_lock lock(dir_ + "/tokens.lock");
    if (!lock.ok()) return error = "cannot lock " + dir_ + "/tokens.lock", false;
    nlohmann::json j = load(path());
    token_id.clear();
    for (const auto &r : j.value("joins", nlohmann::json::array()))
        if (r.value("node", "") == node && r.value("serial", "") == serial)
            token_id = r.value("token", "");
    for (auto &t : j["tokens"])
        if (!token_id.empty() && t.value("id", "") == token_id) {
            t["revoked"]   = true;
            t["uses_left"] = 0;
        }
    j["revoked"].push_back(
        {{"node", node}, {"serial", serial}, {"at", static_cast<int64_t>(std::time(nullptr))}});
    if (!save(path(), j)) return error = "cannot write " + path(), false;
    return true;
}

bool token_store::revoked(const std::string &serial) {
    for (const auto &[node, s] : revoked_nodes())
        if (s == serial) return true;
    return false;
}

std::vector<std::pair<std::string, std::string>> token_store::revoked_nodes() {
    file_lock lock(dir_ + "/tokens.lock");
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto &r : load(path()).value("revoked", nlohmann::json::array()))
        out.emplace_back(r.value("node", ""), r.value("serial", ""));
    return out;
}

}  // namespace sf::cluster
