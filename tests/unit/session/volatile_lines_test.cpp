#include "session/volatile_lines.h"

#include <gtest/gtest.h>

using sf::chat_message;

TEST(VolatileLines, RemovesClaudeCodeBillingHeaderFromSystemMessages) {
    std::vector<chat_message> a = {
        {"system", "x-anthropic-billing-header: cc_version=2.1.1; cch=abc123;\nYou are Claude."},
        {"user", "x-anthropic-billing-header: stays in user text"}};
    std::vector<chat_message> b = {
        {"system", "X-Anthropic-Billing-Header: cc_version=2.1.1; cch=ffff00;\n\nYou are Claude."},
        {"user", "x-anthropic-billing-header: stays in user text"}};
    EXPECT_EQ(sf::normalize_volatile_lines(a), 1);
    EXPECT_EQ(sf::normalize_volatile_lines(b), 1);
    EXPECT_EQ(a[0].content, "You are Claude.");
    EXPECT_EQ(a[0].content, b[0].content);
    EXPECT_EQ(a[1].content, "x-anthropic-billing-header: stays in user text");
}

TEST(VolatileLines, LeavesOtherTextAlone) {
    std::vector<chat_message> m = {
        {"system", "Line one\n  x-anthropic-billing-header: v\nLine two"},
        {"system", "No header here\n"}};
    EXPECT_EQ(sf::normalize_volatile_lines(m), 1);
    EXPECT_EQ(m[0].content, "Line one\nLine two");
    EXPECT_EQ(m[1].content, "No header here\n");
}
