#include "util/utf8.h"

#include <gtest/gtest.h>

using sf::utf8::complete_prefix;
using sf::utf8::sanitize;

TEST(Utf8, CompletePrefixHoldsBackAnUnfinishedCodePoint) {
    const std::string rocket = "\xF0\x9F\x9A\x80";  // U+1F680, 4 bytes
    EXPECT_EQ(complete_prefix("ab"), 2u);
    EXPECT_EQ(complete_prefix("ab" + rocket), 6u);
    for (size_t cut = 1; cut < 4; ++cut) {
        EXPECT_EQ(complete_prefix("ab" + rocket.substr(0, cut)), 2u) << cut;
    }
    EXPECT_EQ(complete_prefix("\xE8\xB5"), 0u);      // first 2 bytes of 赋
    EXPECT_EQ(complete_prefix("\xE8\xB5\x8B"), 3u);  // whole 赋
}

TEST(Utf8, InvalidBytesAreNotHeldForever) {
    EXPECT_EQ(complete_prefix("a\x80"), 2u);  // stray continuation byte
    EXPECT_EQ(complete_prefix("a\xFF"), 2u);
}

TEST(Utf8, B19_SanitizeReplacesInvalidSequences) {
    EXPECT_EQ(sanitize("ok"), "ok");
    EXPECT_EQ(sanitize("\xE2\x28"), "\xEF\xBF\xBD(");               // B19's bytes
    EXPECT_EQ(sanitize("a\xF0\x9F"), "a\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated at the end
    EXPECT_EQ(sanitize("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
    EXPECT_EQ(sanitize("\xE8\xB5\x8B"), "\xE8\xB5\x8B");
}
