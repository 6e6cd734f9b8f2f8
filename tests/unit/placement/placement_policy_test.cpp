// Placement's choice (placement/placement_policy.h): soonest start, spread, prefix affinity,
// interactive over batch, never an unusable node.
#include <gtest/gtest.h>

#include "placement/placement_policy.h"

using sf::node_load;
using sf::pick_node;

TEST(placement_policy, the_most_free_slots_wins_and_ties_go_to_the_first_node) {
    EXPECT_EQ(pick_node({{true, 4, 1, 0}, {true, 4, 0, 0}, {true, 4, 0, 0}}), 1);
    EXPECT_EQ(pick_node({{true, 4, 0, 0}, {true, 4, 0, 0}}), 0);
    EXPECT_EQ(pick_node({{true, 2, 0, 0}, {true, 8, 3, 0}}), 1);  // 2 free vs 5 free
}

TEST(placement_policy, a_node_that_is_not_usable_is_never_chosen) {
    EXPECT_EQ(pick_node({{false, 8, 0, 0}, {true, 2, 1, 0}}), 1);
    EXPECT_EQ(pick_node({{false, 8, 0, 0}, {false, 2, 0, 0}}), -1);
    EXPECT_EQ(pick_node({}), -1);
    EXPECT_EQ(pick_node({{true, 0, 0, 0}}), -1);  // no slots reported yet (loading)
}

TEST(placement_policy, with_every_slot_taken_the_shortest_queue_per_slot_wins) {
    EXPECT_EQ(pick_node({{true, 2, 2, 3}, {true, 4, 4, 1}}), 1);  // 6/2 vs 6/4
    EXPECT_EQ(pick_node({{true, 4, 4, 0}, {true, 4, 4, 2}}), 0);
}

TEST(placement_policy, waiting_sessions_count_against_free_slots) {
    EXPECT_EQ(pick_node({{true, 4, 0, 4}, {true, 4, 2, 0}}), 1);
}

TEST(placement_policy, a_node_holding_half_the_prefix_or_more_wins_among_free_nodes) {
    const sf::placement_request turn2{false, 10};
    // usable, slots, running, waiting, batch, affinity
    EXPECT_EQ(pick_node({{true, 4, 0, 0, 0, 0}, {true, 4, 3, 0, 0, 9}}, turn2), 1);
    EXPECT_EQ(pick_node({{true, 4, 0, 0, 0, 5}, {true, 4, 3, 0, 0, 9}}, turn2), 1);  // longer
    // Less than half: load decides (a shared system prompt alone does not pile sessions up).
    EXPECT_EQ(pick_node({{true, 4, 0, 0, 0, 0}, {true, 4, 3, 0, 0, 4}}, turn2), 0);
    // Equal matches: the most free slots.
    EXPECT_EQ(pick_node({{true, 4, 2, 0, 0, 8}, {true, 4, 0, 0, 0, 8}}, turn2), 1);
    // The node holding it is full: another node with a free slot starts it sooner.
    EXPECT_EQ(pick_node({{true, 4, 0, 0, 0, 0}, {true, 4, 4, 0, 0, 10}}, turn2), 0);
}

TEST(placement_policy, with_every_slot_taken_the_queue_decides_then_the_prefix) {
    const sf::placement_request turn2{false, 10};
    EXPECT_EQ(pick_node({{true, 4, 4, 0, 0, 0}, {true, 4, 4, 0, 0, 10}}, turn2), 1);
    EXPECT_EQ(pick_node({{true, 4, 4, 0, 0, 0}, {true, 4, 4, 2, 0, 10}}, turn2), 0);
}

TEST(placement_policy, an_interactive_session_may_take_a_batch_sequences_slot) {
    const sf::placement_request chat{true, 0};
    const sf::placement_request job{false, 0};
    // Both full; node 1 runs batch work an interactive session preempts.
    const std::vector<node_load> full = {{true, 4, 4, 1, 0, 0}, {true, 4, 4, 0, 2, 0}};
    EXPECT_EQ(pick_node(full, chat), 1);
    EXPECT_EQ(pick_node(full, job), 1);  // queues 6/4 vs 5/4
    const std::vector<node_load> busy = {{true, 4, 4, 0, 0, 0}, {true, 4, 4, 1, 3, 0}};
    EXPECT_EQ(pick_node(busy, chat), 1);  // 3 batch sequences to preempt there
    EXPECT_EQ(pick_node(busy, job), 0);   // a normal one queues where the queue is shorter
}
