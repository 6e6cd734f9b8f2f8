#include "scheduler/tick_planner.h"

#include <gtest/gtest.h>

using sf::plan_input;
using sf::plan_tick;
using sf::priority_class;

TEST(TickPlanner, DecodeStepsGoBeforePrefillAndRespectTheBudget) {
    std::vector<plan_input> seqs = {
        {0, priority_class::NORMAL, 1000, false, 0, 1},  // prefilling a long prompt
        {1, priority_class::NORMAL, 1, true, 5, 2},      // generating
        {2, priority_class::BATCH, 1, true, 5, 3},       // generating
    };
    auto plan = plan_tick(seqs, {64, 512});
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[0].slot, 1);
    EXPECT_EQ(plan[1].slot, 2);
    EXPECT_EQ(plan[2].slot, 0);
    EXPECT_EQ(plan[2].n_tokens, 62);  // what the decode steps left of 64
}

TEST(TickPlanner, InteractivePrefillTickCarriesNoLowerClassPrefill) {
    std::vector<plan_input> seqs = {
        {0, priority_class::BATCH, 500, false, 0, 1},
        {1, priority_class::INTERACTIVE, 30, false, 0, 2},
        {2, priority_class::BATCH, 1, true, 4, 3},  // a batch decode step still goes in
    };
    auto plan = plan_tick(seqs, {64, 512});
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0].slot, 2);
    EXPECT_EQ(plan[1].slot, 1);
    EXPECT_EQ(plan[1].n_tokens, 30);
    // Once the interactive prompt is in (it generates now), batch prefill takes the budget.
    seqs[1] = {1, priority_class::INTERACTIVE, 1, true, 1, 2};
    plan    = plan_tick(seqs, {64, 512});
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[0].slot, 1);
    EXPECT_EQ(plan[2].slot, 0);
    EXPECT_EQ(plan[2].n_tokens, 62);
}

TEST(TickPlanner, PrefillChunksAreWholeQuantaExceptAPromptsLastPiece) {
    // Budget 512 total, 200 prompt tokens per tick, quantum 64: 192 (3 x 64), not 200.
    std::vector<plan_input> seqs = {{0, priority_class::NORMAL, 1000, false, 0, 1}};
    auto plan                    = plan_tick(seqs, {512, 512, 200, 64});
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].n_tokens, 192);
    // The end of a prompt goes in whole when it fits.
    seqs[0].pending = 150;
    plan            = plan_tick(seqs, {512, 512, 200, 64});
    EXPECT_EQ(plan[0].n_tokens, 150);
    // The prompt budget is shared: a second sequence gets what the first left, in quanta.
    seqs.push_back({1, priority_class::NORMAL, 1000, false, 0, 2});
    plan = plan_tick(seqs, {512, 512, 200, 64});
    ASSERT_EQ(plan.size(), 1u) << "50 tokens left: less than a quantum, not worth a chunk";
    EXPECT_EQ(plan[0].n_tokens, 150);
    plan = plan_tick(seqs, {512, 512, 300, 64});
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[1].n_tokens, 128);
}

TEST(TickPlanner, PrefillIsChunkedAndRoundRobinWithinAClass) {
    std::vector<plan_input> seqs = {
        {0, priority_class::NORMAL, 5000, false, 7, 1},  // served last tick
        {1, priority_class::NORMAL, 5000, false, 3, 2},  // waited longer
    };
    auto plan = plan_tick(seqs, {256, 256});
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].slot, 1);
    EXPECT_EQ(plan[0].n_tokens, 256);
}

TEST(TickPlanner, NothingPendingMeansAnEmptyTick) {
    EXPECT_TRUE(plan_tick({{0, priority_class::NORMAL, 0, false, 0, 1}}, {64, 64}).empty());
}
