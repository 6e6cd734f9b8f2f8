// Prefix affinity (placement/prefix_affinity.h): a conversation's next turn extends its first
// turn's chain, so the node given the first turn matches it; other conversations do not.
#include <gtest/gtest.h>

#include <string>

#include "placement/prefix_affinity.h"

using sf::affinity_index;
using sf::generate_request;
using sf::prefix_chain;

namespace {

generate_request conversation(const std::string &system, int turns) {
    generate_request r;
    r.messages.push_back({"system", system});
    for (int t = 0; t < turns; ++t) {
        r.messages.push_back({"user", "question " + std::to_string(t) + std::string(300, 'q')});
        if (t + 1 < turns)
            r.messages.push_back(
                {"assistant", "answer " + std::to_string(t) + std::string(400, 'a')});
    }
    return r;
}

}  // namespace

TEST(prefix_affinity, a_next_turn_extends_the_chain_of_the_turn_before) {
    const std::string system(3000, 's');
    const auto one = prefix_chain(conversation(system, 1));
    const auto two = prefix_chain(conversation(system, 2));
    ASSERT_GE(one.size(), 6u);  // 3300+ bytes of text, 512-byte chunks
    ASSERT_GT(two.size(), one.size());
    for (size_t k = 0; k < one.size(); ++k) EXPECT_EQ(one[k], two[k]) << k;
    // Another system prompt: nothing in common from the first chunk on.
    const auto other = prefix_chain(conversation(std::string(3000, 't'), 2));
    EXPECT_NE(other[0], two[0]);
    // Shorter than one chunk: no chain, no affinity.
    EXPECT_TRUE(prefix_chain(conversation("short", 1)).empty());
    // A tool list changes the text from the start.
    generate_request with_tools = conversation(system, 1);
    with_tools.chat.tools.push_back({"read", "reads a file", "{}"});
    EXPECT_NE(prefix_chain(with_tools)[0], one[0]);
}

TEST(prefix_affinity, the_index_matches_leading_chunks_per_node_and_forgets_a_node) {
    const std::string system(3000, 's');
    const auto one = prefix_chain(conversation(system, 1));
    const auto two = prefix_chain(conversation(system, 2));
    affinity_index idx;
    idx.record(7, one);
    EXPECT_EQ(idx.match(7, two), one.size());
    EXPECT_EQ(idx.match(8, two), 0u);
    idx.forget(7);
    EXPECT_EQ(idx.match(7, two), 0u);
}

TEST(prefix_affinity, the_index_keeps_the_most_recent_entries_up_to_its_capacity) {
    affinity_index idx(4);
    idx.record(1, {1, 2, 3});
    idx.record(1, {10, 11});  // 1 is the least recently used: dropped
    EXPECT_EQ(idx.match(1, {1, 2, 3}), 0u);
    EXPECT_EQ(idx.match(1, {10, 11}), 2u);
    idx.record(1, {2, 3, 20});  // 2 and 3 touched again, 20 added: 10 is now the oldest
    EXPECT_EQ(idx.match(1, {10, 11}), 0u);
    EXPECT_EQ(idx.match(1, {2, 3, 20}), 3u);
}
