// Unit tests of the Anthropic usage block (no server): prompt-caching semantics, the same
// numbers in the message body, message_start and message_delta.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/anthropic/anthropic_response.h"

using namespace sf;
using json = nlohmann::json;

TEST(AnthropicUsage, CachedTokensAreReadFromTheCacheAndNotInputTokens) {
    anthropic_meta m{"msg_1", "m", 100, 60, 5};
    parsed_message msg;
    msg.content = "hi";
    json u      = json::parse(anthropic_message_response(m, msg, "end_turn", ""))["usage"];
    EXPECT_EQ(u["input_tokens"], 40);
    EXPECT_EQ(u["cache_read_input_tokens"], 60);
    EXPECT_EQ(u["cache_creation_input_tokens"], 0);
    EXPECT_EQ(u["output_tokens"], 5);
    // A count beyond the prompt (never sent) cannot make input_tokens negative.
    m.cached_tokens = 500;
    u               = json::parse(anthropic_message_response(m, msg, "end_turn", ""))["usage"];
    EXPECT_EQ(u["input_tokens"], 0);
    EXPECT_EQ(u["cache_read_input_tokens"], 100);
}

TEST(AnthropicUsage, StreamStartAndDeltaCarryTheCountsTheyAreGiven) {
    anthropic_stream st(anthropic_meta{"msg_1", "m", 100, 0, 0});
    auto start = st.start(70);
    ASSERT_EQ(start[0].first, "message_start");
    json su = json::parse(start[0].second)["message"]["usage"];
    EXPECT_EQ(su["input_tokens"], 30);
    EXPECT_EQ(su["cache_read_input_tokens"], 70);
    auto end = st.finish("end_turn", "", 3, 70);
    json du;
    for (const auto &[name, data] : end)
        if (name == "message_delta") du = json::parse(data)["usage"];
    EXPECT_EQ(du["input_tokens"], 30);
    EXPECT_EQ(du["cache_read_input_tokens"], 70);
    EXPECT_EQ(du["cache_creation_input_tokens"], 0);
    EXPECT_EQ(du["output_tokens"], 3);
}
