// llama_engine::sample_many (engine/llama/parallel_sampling.h): a tick's plain samples run on
// ggml's compute threads, and every sequence gets the token sample() would have drawn — with
// sequences of every sampling shape in one batch, a grammar-constrained one (sampled on the
// tick thread) among them, over several decode steps.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "decode_threads.h"
#include "engine/llama/llama_engine.h"
#include "tiny_engine.h"

namespace {

constexpr int k_seqs = 6;

std::vector<sf::sampling_params> shapes() {
    std::vector<sf::sampling_params> v(k_seqs);
    for (int i = 0; i < k_seqs; ++i) {
        v[i].temperature = 1.0f;
        v[i].top_k       = 0;
        v[i].top_p       = 1.0f;
        v[i].min_p       = 0.0f;
        v[i].seed        = 100 + static_cast<uint64_t>(i);
    }
    v[1].top_k              = 40;  // the bench's shape
    v[2].temperature        = 0;   // greedy
    v[3].top_p              = 0.9f;
    v[3].min_p              = 0.05f;
    v[4].constraint.grammar = "root ::= [a-z ]+";  // not plain: sampled by sample()
    return v;
}

// Starts the sequences, decodes their prompts in one batch, then `steps` single-token decodes
// of all of them; samples with sample_many (or sample() one by one). Returns each sequence's
// tokens.
std::vector<std::vector<sf::token_id>> run(sf::llama_engine &e, bool many, int steps) {
    const auto params = shapes();
    std::vector<std::vector<sf::token_id>> prompts, out(k_seqs);
    std::vector<sf::batch_item> items;
    for (int s = 0; s < k_seqs; ++s) {
        prompts.push_back(e.tokenize("Sequence " + std::to_string(s) + " says", false));
        EXPECT_TRUE(e.seq_start(s, params[s], prompts[s]));
        items.push_back({s, prompts[s], 0, true});
    }
    for (int step = 0; step <= steps; ++step) {
        EXPECT_EQ(e.decode(items), 0);
        std::vector<sf::sample_request> reqs;
        for (int s = 0; s < k_seqs; ++s) reqs.push_back({s, s, static_cast<uint32_t>(step)});
        if (many) {
            e.sample_many(reqs);
        } else {
            for (auto &r : reqs) r.out = e.sample(r.seq, r.item, r.index);
        }
        items.clear();
        for (int s = 0; s < k_seqs; ++s) {
            out[s].push_back(reqs[s].out);
            const int pos = static_cast<int>(prompts[s].size()) + step;
            items.push_back({s, {reqs[s].out}, pos, true});
        }
    }
    for (int s = 0; s < k_seqs; ++s) e.seq_end(s);
    return out;
}

TEST(ParallelSampling, EachSequenceGetsTheTokenSampleWouldDraw) {
    if (sf::test::k_decode_threads < 2)
        GTEST_SKIP() << "one decode thread (ThreadSanitizer build): no threadpool to sample on";
    std::filesystem::path dir;
    std::string err;
    auto o = sf::test::tiny_engine_options("parallel-sampling", 5, dir, err);
    ASSERT_EQ(err, "");
    o.parallel = k_seqs;
    {
        sf::llama_engine e(o);
        const auto one_by_one = run(e, false, 12);
        EXPECT_EQ(e.parallel_samples(), 0u);
        const auto many = run(e, true, 12);
        // Five plain sequences per step, 13 steps, on the threadpool; the grammar's on its own.
        EXPECT_EQ(e.parallel_samples(), 5u * 13u);
        EXPECT_EQ(many, one_by_one);
        for (const auto &tokens : many) EXPECT_EQ(tokens.size(), 13u);
    }
    std::filesystem::remove_all(dir);
}

}  // namespace
