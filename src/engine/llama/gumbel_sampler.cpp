#include "engine/llama/gumbel_sampler.h"

#include <llama.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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

// Uniform in (0, 1) from (seed, index, token): 53 random bits, never 0 or 1.
double unit(uint64_t seed, uint32_t index, int32_t token) {
    uint64_t h = mix(mix(seed ^ mix(index)) ^ static_cast<uint32_t>(token));
    return (static_cast<double>(h >> 11) + 0.5) / 9007199254740992.0;
}

const char *name(const llama_sampler *) {
    return "sf-gumbel";
}

// Inverse-CDF draw with one counter-based uniform: softmax over the finite candidates, then
// the first candidate whose running probability mass reaches u. One expf per candidate: with
// no top-k before it (OpenAI's defaults) that is 152k of them per token for a Qwen vocabulary;
// the Gumbel-max form this replaced needed a hash and two logs per candidate (about 4 ms a
// token on the 2-core machine, half of a decode step).
void apply(llama_sampler *smpl, llama_token_data_array *cur_p) {
    auto *ctx = static_cast<gumbel_ctx *>(smpl->ctx);
    float max = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < cur_p->size; ++i) max = std::max(max, cur_p->data[i].logit);
    if (!std::isfinite(max)) {
        cur_p->selected = 0;
        return;
    }
    double sum = 0;
    for (size_t i = 0; i < cur_p->size; ++i) {
        const float l = cur_p->data[i].logit;
        // -inf: removed by an earlier stage (top-k, min-p, grammar, …).
        const float e    = std::isfinite(l) ? std::exp(l - max) : 0.0f;
        cur_p->data[i].p = e;
        sum += e;
    }
    const double target = unit(ctx->seed, ctx->index, 0) * sum;
    double acc          = 0;
    int64_t pick        = -1;
    for (size_t i = 0; i < cur_p->size; ++i) {
        if (cur_p->data[i].p <= 0) continue;
        pick = static_cast<int64_t>(i);
        acc += cur_p->data[i].p;
        if (acc >= target) break;
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
