#include "engine/llama/gumbel_sampler.h"

#include <llama.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace sf {

namespace {

struct gumbel_ctx {
    uint64_t seed;
    uint32_t index;
};

// splitmix64 finalizer (Steele, Lea, Flood 2014): a well-mixed 64-bit hash.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

const char *name(const llama_sampler *) {
    return "sf-gumbel";
}

// u in (0, 1) for a token, from the per-draw base hash: 23 bits, 2^-24 .. 1 - 2^-24, both exact
// in float.
float uniform(uint64_t base, int32_t token) {
    const uint64_t h = mix(base ^ static_cast<uint32_t>(token));
    return (static_cast<float>(h >> 41) + 0.5f) * (1.0f / 8388608.0f);
}

uint64_t draw_base(uint64_t seed, uint32_t index) {
    return mix(seed ^ mix(index));
}

// Gumbel-max: argmax over the candidates of logit + G, G = -log(-log(u)), u hashed from
// (seed, index, token id). Only per-token scores are compared, so the pick does not depend on
// the candidates' order, and float noise in the logits (a prompt prefilled in other chunks after
// a prefix-cache hit) changes it only when the two best scores are that close. (An inverse-CDF
// draw was tried and dropped: on a flat distribution over 152k tokens its boundaries are ~1e-5
// apart, closer than the accumulated noise, and cached and fresh runs diverged at once.)
//
// Cost, without changing any pick: the candidates go in blocks of 256. After the first block
// has set `best`, a block is screened by a branch-free loop (`screen`, vectorized: 8 hashes per
// AVX-512 instruction) that keeps only the candidates that could still beat `best`, and only
// those get the two logarithms. A candidate beats `best` only if G > t = best - logit, i.e.
// 1 - u < 1 - exp(-exp(-t)) <= exp(-t); the screen keeps those with (1 - u) 2^23 < 2^c, c an
// integer above 23 - t' log2(e), t' = t less a slack far above a float score's error. On a
// random-weight model's flat logits over Qwen3's 151,936 tokens (the OpenAI API's default:
// temperature 1, no top-k) every candidate must be hashed: 0.54 ms per token before the screen,
// 0.14–0.17 ms with it; over flat to peaked logits, 0.2–1.07 ms before, 0.13–0.24 ms after
// (a stand-alone copy of both loops, same picks on 2,000 draws of each shape).
constexpr float k_max_gumbel = 17.0f;  // > -log(-log(1 - 2^-24)), the largest G
constexpr size_t k_block     = 256;

// The 23-bit draw behind uniform(): u = (draw + 0.5) / 2^23.
uint32_t draw23(uint64_t base, int32_t token) {
    return static_cast<uint32_t>(mix(base ^ static_cast<uint32_t>(token)) >> 41);
}

// Writes the draws of `n` candidates to `draws` and marks in `live` those that may score above
// `best`; returns how many are marked. Compiled for AVX-512 and AVX2 beside the baseline, chosen
// at load time (target_clones) — except under ThreadSanitizer, whose runtime is not yet up when
// the loader calls the clones' resolver (GCC 12: the instrumented resolver crashes the program
// at start).
#if defined(__SANITIZE_THREAD__)
#define SF_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SF_TSAN_BUILD 1
#endif
#endif
#if defined(__x86_64__) && !defined(SF_TSAN_BUILD)
#define SF_SCREEN_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SF_SCREEN_CLONES
#endif
SF_SCREEN_CLONES uint32_t screen(const llama_token_data *d, size_t n, uint64_t base, float best,
                                 uint32_t *draws, uint8_t *live) {
    const float lo    = best - k_max_gumbel;
    const float slack = 0.05f + 1e-5f * std::fabs(best);
    const float log2e = 1.4426950408889634f;
    const float z0    = 23.0f - (best - slack) * log2e;
    uint32_t count    = 0;
    for (size_t j = 0; j < n; ++j) {
        const uint32_t h = draw23(base, d[j].id);
        const float l    = d[j].logit;
        float z          = z0 + l * log2e;                               // 23 - t' log2(e)
        z                = z > -3.0f ? (z < 25.0f ? z : 25.0f) : -3.0f;  // NaN: -3
        const int32_t c  = static_cast<int32_t>(z + 4.0f) - 3;           // floor(z) + 1 > z
        const float p    = std::bit_cast<float>(static_cast<uint32_t>(c + 127) << 23);  // 2^c
        const float r    = static_cast<float>(8388607u - h) + 0.5f;  // (1 - u) 2^23
        const auto v     = static_cast<uint8_t>((l > lo) & (r < p));
        draws[j]         = h;
        live[j]          = v;
        count += v;
    }
    return count;
}

void apply(llama_sampler *smpl, llama_token_data_array *cur_p) {
    auto *ctx           = static_cast<gumbel_ctx *>(smpl->ctx);
    const uint64_t base = draw_base(ctx->seed, ctx->index);
    float best          = -std::numeric_limits<float>::infinity();
    int64_t pick        = -1;
    uint32_t draws[k_block];
    uint8_t live[k_block];
    for (size_t b = 0; b < cur_p->size; b += k_block) {
        const llama_token_data *d = cur_p->data + b;
        const size_t nb           = std::min(k_block, cur_p->size - b);
        if (pick < 0) {  // nothing to screen against yet: every candidate is live
            for (size_t j = 0; j < nb; ++j) draws[j] = draw23(base, d[j].id);
            std::memset(live, 1, nb);
        } else if (screen(d, nb, base, best, draws, live) == 0) {
            continue;
        }
        for (size_t j = 0; j < nb; ++j) {
            // -inf: removed by an earlier stage (top-k, grammar, …)
            if (!live[j] || !std::isfinite(d[j].logit)) continue;
            const float u     = (static_cast<float>(draws[j]) + 0.5f) * (1.0f / 8388608.0f);
            const float score = d[j].logit - std::log(-std::log(u));
            if (score > best) {
                best = score;
                pick = static_cast<int64_t>(b + j);
            }
        }
    }
    cur_p->selected = pick < 0 ? 0 : pick;
}

llama_sampler *clone(const llama_sampler *smpl);

void free_ctx(llama_sampler *smpl) {
    delete static_cast<gumbel_ctx *>(smpl->ctx);
}

llama_sampler_i make_iface() {
    llama_sampler_i i;
    std::memset(&i, 0, sizeof i);
    i.name  = name;
    i.apply = apply;
    i.clone = clone;
    i.free  = free_ctx;
    return i;
}

llama_sampler_i iface = make_iface();

llama_sampler *clone(const llama_sampler *smpl) {
    const auto *ctx = static_cast<const gumbel_ctx *>(smpl->ctx);
    return llama_sampler_init(&iface, new gumbel_ctx{*ctx});
}

}  // namespace

float gumbel_noise(uint64_t seed, uint32_t index, int32_t token) {
    return -std::log(-std::log(uniform(draw_base(seed, index), token)));
}

llama_sampler *gumbel_sampler_init(uint64_t seed) {
    return llama_sampler_init(&iface, new gumbel_ctx{seed, 0});
}

void gumbel_sampler_set_index(llama_sampler *chain, uint32_t index) {
    for (int32_t i = 0; i < llama_sampler_chain_n(chain); ++i) {
        llama_sampler *s = llama_sampler_chain_get(chain, i);
        if (std::strcmp(llama_sampler_name(s), "sf-gumbel") == 0)
            static_cast<gumbel_ctx *>(s->ctx)->index = index;
    }
}

void gumbel_sampler_install(llama_sampler *chain, uint64_t seed) {
    for (int32_t i = llama_sampler_chain_n(chain) - 1; i >= 0; --i) {
        if (std::strcmp(llama_sampler_name(llama_sampler_chain_get(chain, i)), "dist") == 0) {
            llama_sampler_free(llama_sampler_chain_remove(chain, i));
        }
    }
    llama_sampler_chain_add(chain, gumbel_sampler_init(seed));
}

}  // namespace sf
