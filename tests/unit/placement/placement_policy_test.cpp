// Placement's choice (placement/placement_policy.h): soonest start, spread, never an unusable
// node.
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
