#include "gguf_fill.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace sf::mkmodel::detail {

uint64_t fnv1a(const std::string &s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

uint64_t tensor_seed(uint64_t seed, const std::string &name) {
    return splitmix64{seed}.next() ^ fnv1a(name);
}

void fill_uniform(splitmix64 &rng, float std, float *out, int64_t n) {
    const float scale = std * std::sqrt(3.0f) / float(1 << 23);
    for (int64_t i = 0; i < n; ++i) {
        const int32_t k = int32_t(rng.next() >> 40) - (1 << 23);
        out[i]          = float(k) * scale;
    }
}

std::string write_atomically(const gguf_context *g, const std::string &out) {
    if (out.empty()) return "empty output path";
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(out).parent_path();
    if (!parent.empty()) {
        std::filesystem::create_directories(parent, ec);
        if (ec) return "cannot create directory " + parent.string() + ": " + ec.message();
    }
    static std::atomic<uint64_t> counter{0};
    const std::string tmp =
        out + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f) return "cannot create " + tmp + ": " + std::strerror(errno);
    bool ok = gguf_write_to_file_ptr(g, f, /*only_meta=*/false);
    int err = ok ? 0 : EIO;
    if (ok && std::fflush(f) != 0) ok = false, err = errno;
    if (ok && fsync(fileno(f)) != 0) ok = false, err = errno;
    if (std::fclose(f) != 0 && ok) ok = false, err = errno;
    if (ok) {
        std::filesystem::rename(tmp, out, ec);
        if (!ec) return "";
        std::filesystem::remove(tmp, ec);
        return "cannot rename " + tmp + " to " + out + ": " + ec.message();
    }
    std::filesystem::remove(tmp, ec);
    return "cannot write " + tmp + ": " + std::strerror(err ? err : EIO);
}

}  // namespace sf::mkmodel::detail
