#include "engine/llama/gumbel_sampler.h"

#include <llama.h>

#include <algorithm>
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
// Cost, without changing any pick:
// * a candidate whose logit cannot beat the best score so far even with the largest possible G
//   (-log(-log(1 - 2^-24)) < 16.7) is skipped before hashing — most of a real model's
//   vocabulary;
// * the others beat `best` only if G > t = best - logit, i.e. u > exp(-exp(-t)): a table of that
//   bound at steps of 1/64 (t rounded down to a step, less a margin far above the float error
//   of a score) rejects most of them without the two logarithms. On a random-weight model's
//   flat logits over Qwen3's 151,936 tokens (the OpenAI API's default: temperature 1, no top-k)
//   the logarithms had cost ~4 ms per token.
constexpr float k_max_gumbel = 17.0f;

struct bound_table {
    static constexpr double t0   = -2.0;  // below this the bound rejects too little to look
    static constexpr double step = 1.0 / 64;
    static constexpr int n       = 20 * 64 + 1;  // t up to 18 > k_max_gumbel
    double u[n];
    bound_table() {
        for (int k = 0; k < n; ++k) u[k] = std::exp(-std::exp(-(t0 + k * step)));
    }
    // True when u cannot make logit + G reach best: u <= exp(-exp(-t')) for a t' <= t - margin,
    // t = best - logit (exact in double). The margin is far above a float score's error: about
    // 1e-6 from the logarithms plus half an ulp of the score (6e-8 of its magnitude).
    bool rejects(float best, float logit, float uf) const {
        const double margin = 1e-3 + 1e-6 * std::fabs(static_cast<double>(best));
        const double t      = static_cast<double>(best) - static_cast<double>(logit);
        const double x      = (t - margin - t0) / step;
        if (x < 0) return false;
        const int k = x >= n - 1 ? n - 1 : static_cast<int>(x);
        return static_cast<double>(uf) <= u[k];
    }
};

void apply(llama_sampler *smpl, llama_token_data_array *cur_p) {
    static const bound_table bound;
    auto *ctx           = static_cast<gumbel_ctx *>(smpl->ctx);
    const uint64_t base = draw_base(ctx->seed, ctx->index);
    float best          = -std::numeric_limits<float>::infinity();
    int64_t pick        = -1;
    for (size_t i = 0; i < cur_p->size; ++i) {
        const float logit = cur_p->data[i].logit;
        if (!std::isfinite(logit)) continue;  // removed by an earlier stage (top-k, grammar, …)
        if (logit + k_max_gumbel <= best) continue;
        const float u = uniform(base, cur_p->data[i].id);
        if (pick >= 0 && bound.rejects(best, logit, u)) continue;
        const float score = logit - std::log(-std::log(u));
        if (score > best) {
            best = score;
            pick = static_cast<int64_t>(i);
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
