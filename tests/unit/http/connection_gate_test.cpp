// The head's connection admission (http/connection_gate.h): a connection gets a thread at once
// even in a burst, so a short request never waits behind long-lived streams.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "http/connection_gate.h"

using namespace std::chrono_literals;

TEST(connection_gate, a_burst_of_connections_each_gets_a_thread_at_once) {
    auto stats = std::make_shared<sf::connection_stats>();
    sf::connection_gate gate(64, stats);
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
    std::atomic<int> blocked{0};
    std::atomic<bool> quick_ran{false};
    // Twelve "streams" that hold their thread, then a short request, enqueued back to back
    // before any thread had time to wake (httplib's pool, 8 warm threads, queued the 9th+).
    for (int i = 0; i < 12; ++i)
        ASSERT_TRUE(gate.enqueue([&] {
            ++blocked;
            std::unique_lock lk(mu);
            cv.wait(lk, [&] { return release; });
        }));
    ASSERT_TRUE(gate.enqueue([&] { quick_ran = true; }));
    // The threads start in any order (slowly under the sanitizers): wait for all thirteen to
    // have run, none released yet, so every one had its own thread at the same time.
    for (int i = 0; i < 500 && !(quick_ran && blocked == 12); ++i)
        std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(quick_ran) << "the short request waited behind the streams";
    EXPECT_EQ(blocked.load(), 12);
    {
        std::lock_guard lk(mu);
        release = true;
    }
    cv.notify_all();
    gate.shutdown();  // waits for every connection's thread
    EXPECT_EQ(stats->open.load(), 0u);
    EXPECT_EQ(stats->accepted.load(), 13u);
}

TEST(connection_gate, beyond_the_limit_connections_go_to_the_overflow) {
    auto stats = std::make_shared<sf::connection_stats>();
    sf::connection_gate gate(2, stats);
    std::atomic<int> overflowed{0};
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
    for (int i = 0; i < 2; ++i)
        ASSERT_TRUE(gate.enqueue([&] {
            std::unique_lock lk(mu);
            cv.wait(lk, [&] { return release; });
        }));
    ASSERT_TRUE(gate.enqueue([&] { overflowed += sf::connection_gate::overflowing(); }));
    for (int i = 0; i < 500 && overflowed == 0; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(overflowed.load(), 1);
    {
        std::lock_guard lk(mu);
        release = true;
    }
    cv.notify_all();
    gate.shutdown();
}
