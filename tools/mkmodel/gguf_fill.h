// gguf_fill: what mkmodel's writers share: a seeded, platform-independent random generator,
// the fill of a float row from it, and writing a GGUF file atomically.
//
// Plain functions without state of their own; any thread may call them (one generator per
// thread).
#pragma once

#include <ggml.h>
#include <gguf.h>

#include <cstdint>
#include <memory>
#include <string>

namespace sf::mkmodel::detail {

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast and fully specified, so the stream is the
/// same on every platform and compiler (unlike std:: distributions).
struct splitmix64 {
    uint64_t state;
    /// The next 64 random bits.
    uint64_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
};

/// FNV-1a of `s`: mixes a tensor's name into its generator seed.
uint64_t fnv1a(const std::string &s);

/// The seed of a tensor's own generator stream: from the file's `seed` and the tensor's `name`,
/// so each tensor is independent of the others and of their order.
uint64_t tensor_seed(uint64_t seed, const std::string &name);

/// Fills `out` (n values) with values uniform in [-sqrt(3)*std, sqrt(3)*std) (so their standard
/// deviation is `std`). Each value is an exact 24-bit integer times one float constant: a single
/// rounding, identical under any FP contraction or vectorisation.
void fill_uniform(splitmix64 &rng, float std, float *out, int64_t n);

struct ggml_ctx_deleter {
    void operator()(ggml_context *c) const { ggml_free(c); }
};
struct gguf_ctx_deleter {
    void operator()(gguf_context *c) const { gguf_free(c); }
};
using ggml_ptr = std::unique_ptr<ggml_context, ggml_ctx_deleter>;
using gguf_ptr = std::unique_ptr<gguf_context, gguf_ctx_deleter>;

/// Writes `g` (metadata and tensor data) to `out`, creating missing parent directories: first to
/// a temporary name beside it, flushed and synced, then renamed over `out`, so readers never see
/// a partial file. Returns "" on success, else a message; on error no file is left behind.
std::string write_atomically(const gguf_context *g, const std::string &out);

}  // namespace sf::mkmodel::detail
