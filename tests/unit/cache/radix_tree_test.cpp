#include "cache/radix_tree.h"

#include <gtest/gtest.h>

#include <random>

using sf::token_id;
using sf::cache::radix_tree;

namespace {

std::vector<token_id> seq(std::initializer_list<token_id> t) {
    return t;
}

// The longest common prefix of `p` with any of `entries`, by brute force.
int32_t brute_shared(const std::vector<std::vector<token_id>> &entries,
                     const std::vector<token_id> &p) {
    int32_t best = 0;
    for (const auto &e : entries) {
        int32_t i = 0;
        while (i < static_cast<int32_t>(std::min(e.size(), p.size())) && e[i] == p[i]) ++i;
        best = std::max(best, i);
    }
    return best;
}

}  // namespace

TEST(RadixTree, FindsLongestSharedAndWholePrefix) {
    radix_tree t;
    t.insert(1, seq({1, 2, 3, 4, 5}));
    t.insert(2, seq({1, 2, 3}));
    t.insert(3, seq({1, 2, 9, 9}));
    auto m = t.find(seq({1, 2, 3, 4, 7, 7}), 100);
    EXPECT_EQ(m.shared, 4);
    EXPECT_EQ(m.shared_entry, 1);
    EXPECT_EQ(m.whole, 3);  // entry 2 is whole a prefix; entry 1 is not
    EXPECT_EQ(m.whole_entry, 2);
    m = t.find(seq({1, 2, 9, 9, 9}), 100);
    EXPECT_EQ(m.shared, 4);
    EXPECT_EQ(m.whole_entry, 3);
    m = t.find(seq({5}), 100);
    EXPECT_EQ(m.shared, 0);
    EXPECT_EQ(m.shared_entry, -1);
    EXPECT_EQ(m.whole_entry, -1);
}

TEST(RadixTree, MaxLenBoundsTheMatch) {
    radix_tree t;
    t.insert(1, seq({1, 2, 3, 4}));
    auto m = t.find(seq({1, 2, 3, 4}), 3);
    EXPECT_EQ(m.shared, 3);
    EXPECT_EQ(m.whole, 0);  // the entry (4 tokens) does not fit in 3
}

TEST(RadixTree, EraseKeepsOthersFindable) {
    radix_tree t;
    t.insert(1, seq({1, 2, 3, 4, 5}));
    t.insert(2, seq({1, 2, 3}));
    t.erase(1);
    auto m = t.find(seq({1, 2, 3, 4, 5}), 100);
    EXPECT_EQ(m.shared, 3);
    EXPECT_EQ(m.shared_entry, 2);
    t.erase(2);
    EXPECT_EQ(t.find(seq({1, 2, 3}), 100).shared, 0);
    EXPECT_EQ(t.size(), 0u);
    t.insert(2, seq({1, 2}));  // reinsert after pruning
    EXPECT_EQ(t.find(seq({1, 2, 3}), 100).whole, 2);
}

TEST(RadixTree, AgreesWithBruteForceUnderRandomInsertsAndErases) {
    std::mt19937 rng(42);
    radix_tree t;
    std::map<int64_t, std::vector<token_id>> live;
    for (int step = 0; step < 2000; ++step) {
        if (live.size() < 30 || rng() % 3) {
            std::vector<token_id> e(1 + rng() % 12);
            for (auto &x : e) x = static_cast<token_id>(rng() % 3);
            const int64_t id = step;
            t.insert(id, e);
            live[id] = e;
        } else {
            auto it = live.begin();
            std::advance(it, rng() % live.size());
            t.erase(it->first);
            live.erase(it);
        }
        std::vector<token_id> p(rng() % 14);
        for (auto &x : p) x = static_cast<token_id>(rng() % 3);
        std::vector<std::vector<token_id>> all;
        for (auto &[id, e] : live) all.push_back(e);
        auto m = t.find(p, 100);
        ASSERT_EQ(m.shared, brute_shared(all, p)) << step;
        if (m.shared > 0) {
            // The entry named shares that much.
            const auto &e = live.at(m.shared_entry);
            ASSERT_GE(brute_shared({e}, p), m.shared);
        }
        if (m.whole_entry >= 0) {
            const auto &e = live.at(m.whole_entry);
            ASSERT_EQ(static_cast<int32_t>(e.size()), m.whole);
            ASSERT_TRUE(std::equal(e.begin(), e.end(), p.begin()));
        }
    }
}
