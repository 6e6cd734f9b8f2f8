#include "models/blob_downloader.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>
#include <utility>

namespace sf::models {

namespace fs = std::filesystem;

namespace {

// Owns a file descriptor.
struct fd_guard {
    int fd = -1;
    ~fd_guard() {
        if (fd >= 0) close(fd);
    }
};

// The digest the hub publishes: SHA-256 of the bytes (LFS) or git's blob id, SHA-1 over
// "blob <size>\0" + bytes (non-LFS files).
class content_hash {
  public:
    explicit content_hash(const repo_file &f)
        : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free), git_(f.sha256.empty()), size_(f.size) {
        reset();
    }
    void reset() {
        EVP_DigestInit_ex(ctx_.get(), git_ ? EVP_sha1() : EVP_sha256(), nullptr);
        if (git_) {
            std::string header = "blob " + std::to_string(size_);
            EVP_DigestUpdate(ctx_.get(), header.c_str(), header.size() + 1);  // with the NUL
        }
    }
    void update(const void *p, size_t n) { EVP_DigestUpdate(ctx_.get(), p, n); }
    std::string hex() {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        EVP_DigestFinal_ex(ctx_.get(), md, &n);
        static const char *digits = "0123456789abcdef";
        std::string s;
        for (unsigned i = 0; i < n; ++i) {
            s += digits[md[i] >> 4];
            s += digits[md[i] & 15];
        }
        return s;
    }

  private:
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX *)> ctx_;
    bool git_;
    uint64_t size_;
};

// Hashes the first `n` bytes already in the partial file.
bool hash_prefix(int fd, uint64_t n, content_hash &h) {
    std::vector<char> buf(1 << 20);
    uint64_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, buf.data(), std::min<uint64_t>(buf.size(), n - done), off_t(done));
        if (r <= 0) return false;
        h.update(buf.data(), size_t(r));
        done += uint64_t(r);
    }
    return true;
}

}  // namespace

download_result blob_downloader::fetch(const std::string &url, const repo_file &f,
                                       const std::string &blob_path, const std::string &lock_path,
                                       const download_callbacks &cb, std::string &error) const {
    std::error_code ec;
    fs::create_directories(fs::path(lock_path).parent_path(), ec);
    fs::create_directories(fs::path(blob_path).parent_path(), ec);
    fd_guard lock;
    lock.fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock.fd < 0) {
        error = "cannot open " + lock_path + ": " + strerror(errno);
        return download_result::FAILED;
    }
    // Non-blocking attempts, so that waiting for another pull can still be interrupted.
    bool told = false;
    while (flock(lock.fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            error = "cannot lock " + lock_path + ": " + strerror(errno);
            return download_result::FAILED;
        }
        if (!told && cb.note) cb.note("waiting for another download of " + f.path);
        told = true;
        if (cb.keep_going && !cb.keep_going()) return download_result::INTERRUPTED;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    // The lock is released when lock.fd closes.
    if (fs::is_regular_file(blob_path, ec) && fs::file_size(blob_path, ec) == f.size) {
        if (cb.progress) cb.progress(f.size, f.size);
        return download_result::OK;  // another pull (or tool) finished it
    }
    return fetch_locked(url, f, blob_path, cb, error);
}

download_result blob_downloader::fetch_locked(const std::string &url, const repo_file &f,
                                              const std::string &blob_path,
                                              const download_callbacks &cb,
                                              std::string &error) const {
    const std::string part = blob_path + ".incomplete";
    fd_guard out;
    out.fd = open(part.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (out.fd < 0) {
        error = "cannot write " + part + ": " + strerror(errno);
        return download_result::FAILED;
    }
    struct stat st {};
    fstat(out.fd, &st);
    uint64_t have = uint64_t(st.st_size);
    content_hash hash(f);
    if (have > f.size || !hash_prefix(out.fd, have, hash)) {
        have = 0;
        hash.reset();
        if (ftruncate(out.fd, 0) != 0) {
            error = "cannot truncate " + part;
            return download_result::FAILED;
        }
    }
    if (have > 0 && cb.note) cb.note("resuming " + f.path + " at byte " + std::to_string(have));
    if (cb.progress) cb.progress(have, f.size);

    bool write_failed = false, too_long = false, first_chunk = true;
    auto sink = [&](long status, const char *data, size_t n) {
        if (std::exchange(first_chunk, false) && status == 200 && have > 0) {
            // The server ignored the Range header: start over from byte 0.
            have = 0;
            hash.reset();
            if (ftruncate(out.fd, 0) != 0) return write_failed = true, false;
        }
        if (have + n > f.size) return too_long = true, false;  // more than published
        if (pwrite(out.fd, data, n, off_t(have)) != ssize_t(n)) return write_failed = true, false;
        hash.update(data, n);
        have += n;
        if (cb.progress) cb.progress(have, f.size);
        return true;
    };

    // Retries resume where the last attempt stopped; a connection that keeps failing without
    // progress gives up after a few tries.
    int failures_without_progress = 0;
    while (have < f.size) {
        if (cb.keep_going && !cb.keep_going()) return download_result::INTERRUPTED;
        uint64_t before = have;
        first_chunk     = true;
        auto r          = http_.get_range(url, have, sink, cb.keep_going);
        if (write_failed) {
            error = "cannot write " + part + ": " + strerror(errno);
            return download_result::FAILED;
        }
        if (r.aborted && cb.keep_going && !cb.keep_going()) return download_result::INTERRUPTED;
        if (r.status >= 400 && r.status != 416 && r.status < 500) {
            error = "the hub answered HTTP " + std::to_string(r.status) + " for " + f.path;
            return download_result::FAILED;
        }
        if (too_long) {
            unlink(part.c_str());
            error = "the hub sent more than the published " + std::to_string(f.size) +
                    " bytes of " + f.path + " (the download was discarded)";
            return download_result::FAILED;
        }
        if (r.status == 416) {
            have = 0;  // our partial file does not fit the published one: start over
            hash.reset();
            if (ftruncate(out.fd, 0) != 0) return download_result::FAILED;
        }
        if (have >= f.size) break;
        failures_without_progress = have > before ? 0 : failures_without_progress + 1;
        if (failures_without_progress >= 5) {
            error = "download of " + f.path +
                    " failed: " + (r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error);
            return download_result::FAILED;
        }
        if (cb.note)
            cb.note("connection for " + f.path + " ended at byte " + std::to_string(have) + " (" +
                    (r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error) +
                    "); resuming");
        std::this_thread::sleep_for(std::chrono::milliseconds(200 * failures_without_progress));
    }

    if (cb.verifying) cb.verifying();
    std::string got      = hash.hex();
    const std::string &w = f.etag();
    if (got != w) {
        unlink(part.c_str());
        error = "checksum mismatch for " + f.path + ": expected " +
                (f.sha256.empty() ? "git oid " : "sha256 ") + w + ", got " + got +
                " (the download was discarded; pull again)";
        return download_result::FAILED;
    }
    fsync(out.fd);
    if (rename(part.c_str(), blob_path.c_str()) != 0) {
        error = "cannot rename " + part + ": " + strerror(errno);
        return download_result::FAILED;
    }
    return download_result::OK;
}

}  // namespace sf::models
