// The program's localtime (engine/llama/thread_local_time.h) is what lets llama.cpp's chat
// templates render on many threads with no process-wide lock (issue #38 item 4): each thread's
// result lives in its own struct tm, where the C library's lives in one for all.
#include "engine/llama/thread_local_time.h"

#include <gtest/gtest.h>

#include <ctime>
#include <thread>

TEST(ThreadLocalTime, EachThreadGetsItsOwnResultWithTheSameTime) {
    sf::use_thread_local_time();
    const std::time_t now = std::time(nullptr);
    const std::tm *mine   = std::localtime(&now);  // llama.cpp's call, as it makes it
    ASSERT_NE(mine, nullptr);
    const std::tm *theirs = nullptr;
    std::tm their_copy{};
    std::thread([&] {
        const std::time_t other = now + 86400 * 200;  // another day, another month
        theirs                  = std::localtime(&other);
        their_copy              = *theirs;
    }).join();
    EXPECT_NE(theirs, mine) << "one struct tm shared by threads: the C library's localtime";
    std::tm expect{};
    localtime_r(&now, &expect);
    EXPECT_EQ(mine->tm_yday, expect.tm_yday);  // not overwritten by the other thread's call
    EXPECT_EQ(mine->tm_hour, expect.tm_hour);
    EXPECT_NE(their_copy.tm_yday, mine->tm_yday);
}
