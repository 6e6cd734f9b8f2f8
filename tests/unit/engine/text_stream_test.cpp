#include "engine/text_stream.h"

#include <gtest/gtest.h>

#include <vector>

using sf::text_stream;

// Feeds pieces; returns everything released (push + flush unless stopped).
static std::string run(text_stream &ts, const std::vector<std::string> &pieces,
                       std::vector<std::string> *released = nullptr) {
    std::string out;
    for (const auto &p : pieces) {
        std::string r = ts.push(p);
        if (released) released->push_back(r);
        out += r;
        if (ts.stopped()) return out;
    }
    return out + ts.flush();
}

TEST(TextStream, PassesPlainText) {
    text_stream ts;
    EXPECT_EQ(run(ts, {"Hel", "lo", " world"}), "Hello world");
    EXPECT_FALSE(ts.stopped());
}

TEST(TextStream, B18_NeverSplitsACodePoint) {
    // 赋 = E8 B5 8B split over two tokens, 🚀 over three (B18).
    text_stream ts;
    std::vector<std::string> rel;
    std::string all = run(ts, {"\xE8\xB5", "\x8B", " ", "\xF0\x9F", "\x9A", "\x80"}, &rel);
    EXPECT_EQ(all, "\xE8\xB5\x8B \xF0\x9F\x9A\x80");
    EXPECT_EQ(rel[0], "");
    EXPECT_EQ(rel[1], "\xE8\xB5\x8B");
    EXPECT_EQ(rel[3], "");
    EXPECT_EQ(rel[4], "");
    EXPECT_EQ(rel[5], "\xF0\x9F\x9A\x80");
}

TEST(TextStream, StopStringSpanningTokensIsNeverReleased) {
    text_stream ts({"</end>"});
    std::vector<std::string> rel;
    std::string all = run(ts, {"abc</", "en", "d>tail"}, &rel);
    EXPECT_TRUE(ts.stopped());
    EXPECT_EQ(ts.matched_stop(), "</end>");
    EXPECT_EQ(all, "abc");
    EXPECT_EQ(rel[0], "abc");  // "</" held back: it may start the stop string
    EXPECT_EQ(rel[1], "");
}

TEST(TextStream, PartialMatchThatFailsIsReleased) {
    text_stream ts({"STOP"});
    std::vector<std::string> rel;
    std::string all = run(ts, {"x ST", "ART"}, &rel);
    EXPECT_FALSE(ts.stopped());
    EXPECT_EQ(rel[0], "x ");
    EXPECT_EQ(all, "x START");
}

TEST(TextStream, PartialMatchAtTheEndIsFlushed) {
    text_stream ts({"STOP"});
    EXPECT_EQ(run(ts, {"end ST"}), "end ST");
}

TEST(TextStream, EarliestOfSeveralStopsWins) {
    text_stream ts({"zz", "b"});
    EXPECT_EQ(run(ts, {"aab", "zz"}), "aa");
    EXPECT_EQ(ts.matched_stop(), "b");
}
