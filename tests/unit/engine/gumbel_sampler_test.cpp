// The Gumbel-max stage (engine/llama/gumbel_sampler.h): its pick is argmax(logit + G) over the
// candidates, G = gumbel_noise(seed, index, token), ties to the first, whatever candidates its
// bounds skip (its vectorized screen included). Checked against that definition computed in full,
// on a vocabulary of Qwen3's size, for flat logits (a random-weight model), peaked ones (a real
// model), candidates removed by earlier stages (-inf), and the large magnitudes of a low
// temperature.
#include "engine/llama/gumbel_sampler.h"

#include <gtest/gtest.h>
#include <llama.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

constexpr int k_vocab = 151936;

int64_t reference_pick(const std::vector<llama_token_data> &c, uint64_t seed, uint32_t index) {
    float best   = -std::numeric_limits<float>::infinity();
    int64_t pick = -1;
    for (size_t i = 0; i < c.size(); ++i) {
        if (!std::isfinite(c[i].logit)) continue;
        const float score = c[i].logit + sf::gumbel_noise(seed, index, c[i].id);
        if (score > best) {
            best = score;
            pick = static_cast<int64_t>(i);
        }
    }
    return pick;
}

int64_t sampler_pick(std::vector<llama_token_data> c, uint64_t seed, uint32_t index) {
    llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, sf::gumbel_sampler_init(seed));
    sf::gumbel_sampler_set_index(chain, index);
    llama_token_data_array arr{c.data(), c.size(), -1, false};
    llama_sampler_apply(chain, &arr);
    llama_sampler_free(chain);
    return arr.selected;
}

std::vector<llama_token_data> logits(std::mt19937 &rng, double spread, double scale,
                                     double removed) {
    std::normal_distribution<float> normal(0.0f, static_cast<float>(spread));
    std::uniform_real_distribution<double> coin(0, 1);
    std::vector<llama_token_data> c(k_vocab);
    for (int i = 0; i < k_vocab; ++i) {
        float l = normal(rng) * static_cast<float>(scale);
        if (coin(rng) < removed) l = -std::numeric_limits<float>::infinity();
        c[static_cast<size_t>(i)] = {i, l, 0.0f};
    }
    return c;
}

TEST(GumbelSampler, PicksTheArgmaxOfLogitPlusNoiseWhateverItSkips) {
    std::mt19937 rng(7);
    struct shape {
        const char *name;
        double spread, scale, removed;
    };
    const shape shapes[] = {{"flat", 1.0, 1.0, 0.0},         {"between", 3.0, 1.0, 0.0},
                            {"peaked", 6.0, 1.0, 0.0},       {"very peaked", 30.0, 1.0, 0.0},
                            {"some removed", 1.0, 1.0, 0.5}, {"low temperature", 1.0, 1000.0, 0.0},
                            {"near ties", 0.001, 1.0, 0.0}};
    for (const auto &sh : shapes) {
        SCOPED_TRACE(sh.name);
        const auto c = logits(rng, sh.spread, sh.scale, sh.removed);
        for (uint32_t index = 0; index < 64; ++index) {
            const uint64_t seed = 0x5eed0000ull + index * 7919;
            ASSERT_EQ(sampler_pick(c, seed, index), reference_pick(c, seed, index))
                << "index " << index;
        }
    }
}

// The picks follow softmax(logits): two tokens with logits differing by ln 3, the rest far below,
// are drawn about 3:1 over many indices.
TEST(GumbelSampler, DrawsFollowTheSoftmax) {
    std::vector<llama_token_data> c(1000);
    for (int i = 0; i < 1000; ++i) c[static_cast<size_t>(i)] = {i, -40.0f, 0.0f};
    c[10].logit  = std::log(3.0f);
    c[900].logit = 0.0f;
    int first = 0, second = 0;
    for (uint32_t index = 0; index < 4000; ++index) {
        const auto p = sampler_pick(c, 42, index);
        first += p == 10;
        second += p == 900;
    }
    EXPECT_EQ(first + second, 4000);
    EXPECT_NEAR(static_cast<double>(first) / 4000, 0.75, 0.03);
}

}  // namespace
