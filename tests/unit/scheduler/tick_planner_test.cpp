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

// While an interactive sequence generates, lower classes' prompt tokens in its ticks stop at
// interactive_tick_prefill (what fits the tick-time target: none on a slow model); another
// interactive prompt is not capped by it.
TEST(TickPlanner, AnInteractiveDecodeTickCapsLowerClassPrefill) {
    std::vector<plan_input> seqs = {
        {0, priority_class::BATCH, 500, false, 0, 1},
        {1, priority_class::INTERACTIVE, 1, true, 1, 2},
        {2, priority_class::NORMAL, 300, false, 0, 3},
    };
    sf::planner_options o{512, 512};
    o.quantum = 64;
    for (int32_t cap : {0, 64, 128}) {
        o.interactive_tick_prefill = cap;
        auto plan                  = plan_tick(seqs, o);
        int32_t lower              = 0;
        for (const auto &e : plan)
            if (e.slot != 1) lower += e.n_tokens;
        EXPECT_EQ(plan[0].slot, 1) << cap;
        EXPECT_EQ(lower, cap) << cap;
    }
    o.interactive_tick_prefill = -1;  // not measured yet: the budget as before
    auto plan                  = plan_tick(seqs, o);
    int32_t lower              = 0;
    for (const auto &e : plan)
        if (e.slot != 1) lower += e.n_tokens;
    EXPECT_EQ(lower, 300 + 192);  // the normal prompt whole, then whole quanta of the batch one
    // Another interactive sequence's prompt is not lower class: it takes its whole rest.
    seqs.push_back({3, priority_class::INTERACTIVE, 40, false, 0, 4});
    o.interactive_tick_prefill = 0;
    plan                       = plan_tick(seqs, o);
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[1].slot, 3);
    EXPECT_EQ(plan[1].n_tokens, 40);
    // Without an interactive decode step the cap does not apply.
    seqs = {{0, priority_class::BATCH, 500, false, 0, 1},
            {2, priority_class::NORMAL, 1, true, 1, 3}};
    plan = plan_tick(seqs, o);
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[1].n_tokens, 500);
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
