// Re-attach cursors from the wire (http/session_ids.h): Last-Event-ID, ?after, ?starting_after.
#include "http/session_ids.h"

#include <cpp-httplib/httplib.h>
#include <gtest/gtest.h>

namespace {

struct cursor_result {
    bool ok       = false;
    size_t cursor = 0;
    std::string error;
};

cursor_result resume(const std::string &last_event_id, const std::string &after = "") {
    httplib::Request req;
    if (!last_event_id.empty()) req.headers.emplace("Last-Event-ID", last_event_id);
    if (!after.empty()) req.params.emplace("after", after);
    cursor_result r;
    r.ok = sf::resume_cursor(req, "s1", r.cursor, r.error);
    return r;
}

}  // namespace

TEST(SessionIdsTest, ResumesOnePastTheIndex) {
    EXPECT_EQ(resume("s1:4").cursor, 5u);
    EXPECT_EQ(resume("7").cursor, 8u);
    EXPECT_EQ(resume("", "2").cursor, 3u);
    auto none = resume("");
    EXPECT_TRUE(none.ok);
    EXPECT_EQ(none.cursor, 0u);
}

TEST(SessionIdsTest, RejectsAnotherSessionAndGarbage) {
    auto other = resume("s2:4");
    EXPECT_FALSE(other.ok);
    EXPECT_NE(other.error.find("names another session"), std::string::npos) << other.error;
    EXPECT_FALSE(resume("s1:").ok);
    EXPECT_FALSE(resume("s1:-1").ok);
    EXPECT_FALSE(resume("4x").ok);
}

// Found writing tests/fuzz/fuzz_session_ids: the largest index wrapped the cursor to 0, a
// replay from the start (every event again) instead of an error.
TEST(SessionIdsTest, LargestIndexIsOutOfRangeNotFromTheStart) {
    const std::string max = std::to_string(SIZE_MAX);
    EXPECT_FALSE(resume("s1:" + max).ok);
    EXPECT_FALSE(resume(max).ok);
    EXPECT_FALSE(resume("s1:" + max + "0").ok);  // past size_t
}

TEST(SessionIdsTest, StartingAfterIsDigitsOnly) {
    int64_t after = -1;
    EXPECT_TRUE(sf::parse_starting_after("0", after));
    EXPECT_EQ(after, 0);
    EXPECT_TRUE(sf::parse_starting_after("42", after));
    EXPECT_EQ(after, 42);
    // "-0": found by tests/fuzz/fuzz_session_ids (a signed parse accepted it).
    for (const char *bad :
         {"", "-1", "-0", "+1", " 1", "1 ", "1e3", "9223372036854775808", "99999999999999999999"}) {
        after = 7;
        EXPECT_FALSE(sf::parse_starting_after(bad, after)) << bad;
        EXPECT_EQ(after, 7) << bad;
    }
}
