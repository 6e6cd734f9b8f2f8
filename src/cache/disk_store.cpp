#include "cache/disk_store.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/log.h"
#include "util/paths.h"

namespace sf::cache {

namespace fs = std::filesystem;

namespace {

constexpr char k_magic[4]       = {'S', 'F', 'P', 'C'};
constexpr uint32_t k_version    = 1;
constexpr size_t k_header_bytes = 4 + 4 + 4 + 8;
constexpr size_t k_digest_bytes = 32;
constexpr const char *k_ext     = ".sfpc";

struct sha256 {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    sha256() { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
    ~sha256() { EVP_MD_CTX_free(ctx); }
    void add(const void *p, size_t n) { EVP_DigestUpdate(ctx, p, n); }
    std::vector<uint8_t> done() {
        std::vector<uint8_t> md(EVP_MAX_MD_SIZE);
        unsigned len = 0;
        EVP_DigestFinal_ex(ctx, md.data(), &len);
        md.resize(len);
        return md;
    }
};

std::string hex(const std::vector<uint8_t> &b, size_t n) {
    static const char *d = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < std::min(n, b.size()); ++i) {
        s += d[b[i] >> 4];
        s += d[b[i] & 15];
    }
    return s;
}

}  // namespace

std::string entry_file_name(std::span<const token_id> tokens) {
    sha256 h;
    h.add(tokens.data(), tokens.size_bytes());
    return hex(h.done(), 32) + k_ext;
}

namespace {

// Reads the header and token ids of an entry file; false when they are not well formed.
bool read_header(const std::string &path, std::vector<token_id> &tokens, uint64_t &payload,
                 int64_t &file_bytes) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    char hdr[k_header_bytes];
    if (!f.read(hdr, sizeof hdr) || std::memcmp(hdr, k_magic, 4) != 0) return false;
    uint32_t version = 0, n = 0;
    std::memcpy(&version, hdr + 4, 4);
    std::memcpy(&n, hdr + 8, 4);
    std::memcpy(&payload, hdr + 12, 8);
    if (version != k_version || n == 0 || n > (1u << 24)) return false;
    tokens.resize(n);
    if (!f.read(reinterpret_cast<char *>(tokens.data()), n * sizeof(token_id))) return false;
    std::error_code ec;
    file_bytes = static_cast<int64_t>(fs::file_size(path, ec));
    // Compared without adding `payload` (any u64 from the file): a sum could wrap around and
    // match a file too short to hold the digest, and the payload would then run past the end.
    const uint64_t fixed = k_header_bytes + uint64_t{n} * sizeof(token_id) + k_digest_bytes;
    return !ec && static_cast<uint64_t>(file_bytes) >= fixed &&
           payload == static_cast<uint64_t>(file_bytes) - fixed;
}

}  // namespace

std::string model_fingerprint(const std::string &model_path) {
    std::ifstream f(model_path, std::ios::binary);
    std::error_code ec;
    const uint64_t size = fs::file_size(model_path, ec);
    if (!f || ec) return {};
    sha256 h;
    h.add(&size, sizeof size);
    std::vector<char> buf;
    auto take = [&](uint64_t off, uint64_t n) {
        if (off >= size) return;
        n = std::min(n, size - off);
        buf.resize(n);
        f.seekg(static_cast<std::streamoff>(off));
        f.read(buf.data(), static_cast<std::streamsize>(n));
        h.add(buf.data(), static_cast<size_t>(f.gcount()));
        f.clear();
    };
    constexpr uint64_t edge = 4 << 20, block = 64 << 10, samples = 64;
    take(0, edge);
    for (uint64_t i = 1; i < samples; ++i) take(size / samples * i, block);
    take(size > edge ? size - edge : 0, edge);
    return hex(h.done(), 16);
}

disk_store::disk_store(std::string dir, const std::string &fingerprint, int64_t max_bytes)
    : dir_(std::move(dir) + "/" + fingerprint), max_bytes_(max_bytes) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) SF_LOG_WARN("cache", "cannot create %s: %s", dir_.c_str(), ec.message().c_str());
    // Saved states hold prompts: this user's only, folders made by an older version too.
    paths::restrict_mode(fs::path(dir_).parent_path().string(), 0700);
    paths::restrict_mode(dir_, 0700);
    std::vector<std::pair<fs::file_time_type, int64_t>> by_time;
    for (const auto &de : fs::directory_iterator(dir_, ec)) {
        const std::string path = de.path().string();
        if (de.path().extension() != k_ext) {
            // A temporary file of an interrupted write.
            if (path.find(".tmp.") != std::string::npos) fs::remove(path, ec);
            continue;
        }
        std::vector<token_id> tokens;
        uint64_t payload = 0;
        int64_t bytes    = 0;
        if (!read_header(path, tokens, payload, bytes) ||
            de.path().filename().string() != entry_file_name(tokens)) {
            SF_LOG_WARN("cache", "discarding corrupt prefix cache entry %s", path.c_str());
            fs::remove(path, ec);
            stats_.corrupt++;
            continue;
        }
        const int64_t id                        = next_id_++;
        entries_[id]                            = {path, bytes, 0, true};
        by_name_[de.path().filename().string()] = id;
        index_.insert(id, tokens);
        stats_.bytes += bytes;
        by_time.push_back({fs::last_write_time(path, ec), id});
    }
    // Oldest first in the LRU order.
    std::sort(by_time.begin(), by_time.end());
    for (auto &[t, id] : by_time) entries_[id].last_used = ++clock_;
    // The most recently used entries are what the first requests after a restart ask for: have
    // the kernel read them into the page cache now (asynchronous readahead), so that request
    // restores its prefix from memory instead of waiting on the disk (measured: 20 ms for a
    // 3.3 MB entry read cold, 1 ms warm), and verify their checksums in the background
    // (verify_recent). Bounded to 256 MiB.
    int64_t ahead = 0;
    for (auto it = by_time.rbegin(); it != by_time.rend() && ahead < (int64_t(256) << 20); ++it) {
        const auto &e = entries_[it->second];
        if (int fd = ::open(e.path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
            ::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
            ::close(fd);
        }
        to_verify_.push_back(it->second);
        ahead += e.bytes;
    }
    stats_.entries = static_cast<int64_t>(entries_.size());
    if (!entries_.empty())
        SF_LOG_INFO("cache", "disk tier %s: %lld entries, %lld bytes", dir_.c_str(),
                    static_cast<long long>(stats_.entries), static_cast<long long>(stats_.bytes));
    verifying_ = !to_verify_.empty();
    writer_    = std::thread([this] {
        verify_recent();
        writer_loop();
    });
}

disk_store::~disk_store() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) writer_.join();
}

radix_tree::match disk_store::find(std::span<const token_id> prompt, int32_t max_len) const {
    std::lock_guard lk(mu_);
    return index_.find(prompt, max_len);
}

std::vector<token_id> disk_store::tokens(int64_t id) const {
    std::lock_guard lk(mu_);
    auto t = index_.tokens(id);
    return {t.begin(), t.end()};
}

bool disk_store::has(std::span<const token_id> tokens) const {
    std::lock_guard lk(mu_);
    return by_name_.count(entry_file_name(tokens)) != 0;
}

void disk_store::remove_locked(int64_t id, bool corrupt) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    std::error_code ec;
    fs::remove(it->second.path, ec);
    stats_.bytes -= it->second.bytes;
    by_name_.erase(fs::path(it->second.path).filename().string());
    index_.erase(id);
    entries_.erase(it);
    stats_.entries = static_cast<int64_t>(entries_.size());
    if (corrupt) stats_.corrupt++;
}

mapped_payload::~mapped_payload() {
    reset();
}

mapped_payload::mapped_payload(mapped_payload &&o) noexcept {
    *this = std::move(o);
}

mapped_payload &mapped_payload::operator=(mapped_payload &&o) noexcept {
    if (this != &o) {
        reset();
        std::swap(base_, o.base_);
        std::swap(size_, o.size_);
        std::swap(off_, o.off_);
        std::swap(len_, o.len_);
    }
    return *this;
}

void mapped_payload::reset() {
    if (base_) ::munmap(base_, size_);
    base_ = nullptr;
    size_ = off_ = len_ = 0;
}

std::span<const uint8_t> mapped_payload::payload() const {
    if (!base_) return {};
    return {static_cast<const uint8_t *>(base_) + off_, len_};
}

// Maps the entry file at `path`; with `check`, verifies its checksum. `out` is left empty on
// any failure.
bool disk_store::map_entry(const std::string &path, bool check, mapped_payload &out) {
    std::vector<token_id> tokens;
    uint64_t payload = 0;
    int64_t bytes    = 0;
    out.reset();
    if (!read_header(path, tokens, payload, bytes)) return false;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    void *p      = fd >= 0 ? ::mmap(nullptr, static_cast<size_t>(bytes), PROT_READ,
                                    MAP_PRIVATE | MAP_POPULATE, fd, 0)
                           : MAP_FAILED;
    if (fd >= 0) ::close(fd);
    if (p == MAP_FAILED) return false;
    out.base_ = p;
    out.size_ = static_cast<size_t>(bytes);
    out.off_  = k_header_bytes + tokens.size() * sizeof(token_id);
    out.len_  = static_cast<size_t>(payload);
    if (check) {
        const auto *all = static_cast<const uint8_t *>(p);
        sha256 h;
        h.add(all, out.size_ - k_digest_bytes);
        auto md = h.done();
        if (md.size() != k_digest_bytes ||
            std::memcmp(md.data(), all + out.size_ - k_digest_bytes, md.size()) != 0) {
            out.reset();
            return false;
        }
    }
    return true;
}

bool disk_store::load(int64_t id, mapped_payload &out) {
    std::string path;
    bool trusted = false;
    std::error_code ec;
    {
        std::lock_guard lk(mu_);
        auto it = entries_.find(id);
        if (it == entries_.end() || !it->second.written) return false;
        it->second.last_used = ++clock_;
        path                 = it->second.path;
        trusted              = it->second.verified &&
                  fs::last_write_time(path, ec) == it->second.verified_mtime && !ec;
    }
    const bool ok = map_entry(path, !trusted, out);
    std::lock_guard lk(mu_);
    if (!ok) {
        SF_LOG_WARN("cache", "discarding corrupt prefix cache entry %s (checksum or size)",
                    path.c_str());
        remove_locked(id, true);
        return false;
    }
    const auto now = fs::file_time_type::clock::now();
    fs::last_write_time(path, now, ec);  // LRU across restarts
    if (auto it = entries_.find(id); it != entries_.end()) {
        it->second.verified       = !ec;
        it->second.verified_mtime = fs::last_write_time(path, ec);
        if (ec) it->second.verified = false;
    }
    stats_.loads++;
    return true;
}

// The writer thread, first thing: checksums of the entries read ahead at start, so the first
// requests after a restart load them without hashing. A corrupt one is deleted, as load does.
void disk_store::verify_recent() {
    std::unique_lock lk(mu_);
    for (int64_t id : to_verify_) {
        if (stopping_) break;
        auto it = entries_.find(id);
        if (it == entries_.end()) continue;
        const std::string path = it->second.path;
        std::error_code ec;
        const auto mtime = fs::last_write_time(path, ec);
        lk.unlock();
        mapped_payload m;
        const bool ok = !ec && map_entry(path, true, m);
        lk.lock();
        it = entries_.find(id);
        if (it == entries_.end()) continue;
        if (!ok) {
            SF_LOG_WARN("cache", "discarding corrupt prefix cache entry %s (checksum or size)",
                        path.c_str());
            remove_locked(id, true);
            continue;
        }
        it->second.verified       = true;
        it->second.verified_mtime = mtime;
    }
    to_verify_.clear();
    verifying_ = false;
    cv_.notify_all();
}

void disk_store::store(std::span<const token_id> tokens, host_buffer payload) {
    if (tokens.empty() || payload.empty() || max_bytes_ <= 0) return;
    {
        std::lock_guard lk(mu_);
        const std::string name = entry_file_name(tokens);
        if (by_name_.count(name)) return;
        const int64_t id    = next_id_++;
        const int64_t bytes = static_cast<int64_t>(k_header_bytes + tokens.size_bytes() +
                                                   payload.size() + k_digest_bytes);
        if (bytes > max_bytes_) return;
        entries_[id]   = {dir_ + "/" + name, bytes, ++clock_, false};
        by_name_[name] = id;
        index_.insert(id, tokens);
        queue_.push_back({id, {tokens.begin(), tokens.end()}, std::move(payload)});
    }
    cv_.notify_all();
}

void disk_store::flush() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return queue_.empty() && !busy_ && !verifying_; });
}

disk_stats disk_store::stats() const {
    std::lock_guard lk(mu_);
    return stats_;
}

void disk_store::enforce_bound_locked() {
    while (stats_.bytes > max_bytes_) {
        int64_t victim = -1;
        for (const auto &[id, e] : entries_) {
            if (!e.written) continue;
            if (victim < 0 || e.last_used < entries_[victim].last_used) victim = id;
        }
        if (victim < 0) break;
        remove_locked(victim, false);
        stats_.evicted++;
    }
}

void disk_store::writer_loop() {
    std::unique_lock lk(mu_);
    for (;;) {
        cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) break;  // stopping, nothing left
        job j = std::move(queue_.front());
        queue_.pop_front();
        busy_   = true;
        auto it = entries_.find(j.id);
        if (it == entries_.end()) {
            busy_ = false;
            continue;
        }
        const std::string path = it->second.path;
        lk.unlock();
        // Header, tokens, payload, then the checksum of all three.
        std::string hdr(k_header_bytes, '\0');
        const auto n     = static_cast<uint32_t>(j.tokens.size());
        const uint64_t p = j.payload.size();
        std::memcpy(hdr.data(), k_magic, 4);
        std::memcpy(hdr.data() + 4, &k_version, 4);
        std::memcpy(hdr.data() + 8, &n, 4);
        std::memcpy(hdr.data() + 12, &p, 8);
        sha256 h;
        h.add(hdr.data(), hdr.size());
        h.add(j.tokens.data(), j.tokens.size() * sizeof(token_id));
        h.add(j.payload.data(), j.payload.size());
        const auto md         = h.done();
        const std::string tmp = path + ".tmp." + std::to_string(j.id);
        bool ok               = false;
        {
            std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
            f.write(hdr.data(), static_cast<std::streamsize>(hdr.size()));
            f.write(reinterpret_cast<const char *>(j.tokens.data()),
                    static_cast<std::streamsize>(j.tokens.size() * sizeof(token_id)));
            f.write(reinterpret_cast<const char *>(j.payload.data()),
                    static_cast<std::streamsize>(j.payload.size()));
            f.write(reinterpret_cast<const char *>(md.data()),
                    static_cast<std::streamsize>(md.size()));
            f.flush();
            ok = static_cast<bool>(f);
        }
        std::error_code ec;
        if (ok) fs::rename(tmp, path, ec);
        if (!ok || ec) {
            fs::remove(tmp, ec);
            SF_LOG_WARN("cache", "cannot write prefix cache entry %s", path.c_str());
        }
        lk.lock();
        busy_ = false;
        it    = entries_.find(j.id);
        if (it != entries_.end()) {
            if (!ok) {
                by_name_.erase(fs::path(path).filename().string());
                index_.erase(j.id);
                entries_.erase(it);
            } else {
                it->second.written = true;
                stats_.bytes += it->second.bytes;
                stats_.entries = static_cast<int64_t>(entries_.size());
                stats_.writes++;
                enforce_bound_locked();
            }
        }
        cv_.notify_all();
    }
}

}  // namespace sf::cache
