#include "engine/llama/gumbel_sampler.h"

#include <llama.h>

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

void apply(llama_sampler *smpl, llama_token_data_array *cur_p) {
    auto *ctx    = static_cast<gumbel_ctx *>(smpl->ctx);
    double best  = -std::numeric_limits<double>::infinity();
    int64_t pick = -1;
    for (size_t i = 0; i < cur_p->size; ++i) {
        const float logit = cur_p->data[i].logit;
        if (!std::isfinite(logit)) continue;  // removed by an earlier stage (top-k, min-p, …)
        double score = logit - std::log(-std::log(unit(ctx->seed, ctx->index, cur_p->data[i].id)));
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
