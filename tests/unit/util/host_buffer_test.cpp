#include "util/host_buffer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

using sf::host_buffer;

TEST(HostBuffer, SmallBuffersHoldWhatIsWritten) {
    host_buffer b;
    EXPECT_TRUE(b.empty());
    b.resize(1000);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(b.size(), 1000u);
    std::memset(b.data(), 5, b.size());
    b.resize(10);  // shrinking keeps the memory and its contents
    EXPECT_EQ(b.size(), 10u);
    EXPECT_EQ(b.span()[9], 5);
    b.clear();
    EXPECT_TRUE(b.empty());
    EXPECT_EQ(b.capacity(), 0u);
}

TEST(HostBuffer, LargeBuffersAreWholeHugePagesAndGoBackToThePool) {
    const size_t huge = size_t(2) << 20;
    host_buffer::release_pool();
    host_buffer a;
    a.resize(3 * 1000 * 1000);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % huge, 0u);
    EXPECT_EQ(a.capacity(), 2 * huge);
    std::memset(a.data(), 1, a.size());
    const uint8_t *mem  = a.data();
    const size_t before = host_buffer::pooled_bytes();
    a.clear();
    EXPECT_EQ(host_buffer::pooled_bytes(), before + 2 * huge);
    // The next state of a similar size reuses that memory instead of faulting in new pages.
    host_buffer b;
    b.resize(3 * 1000 * 1000 + 4096);
    EXPECT_EQ(b.data(), mem);
    EXPECT_EQ(host_buffer::pooled_bytes(), before);
}

TEST(HostBuffer, MovingTransfersOwnership) {
    host_buffer a;
    a.resize(2 << 20);
    std::memset(a.data(), 9, a.size());
    host_buffer b = std::move(a);
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(b.size(), size_t(2) << 20);
    EXPECT_EQ(b.span().back(), 9);
    host_buffer c;
    c.resize(100);
    c = std::move(b);
    EXPECT_EQ(c.size(), size_t(2) << 20);
}

TEST(HostBuffer, ASmallerRequestTakesTheHeadOfAPooledMappingAndLeavesTheTail) {
    const size_t huge = size_t(2) << 20;
    host_buffer::release_pool();
    host_buffer a;
    a.resize(2 * huge);
    const uint8_t *mem = a.data();
    a.clear();
    const size_t pooled = host_buffer::pooled_bytes();
    EXPECT_EQ(pooled, 2 * huge);
    host_buffer b;
    b.resize(huge - 100);
    EXPECT_EQ(b.data(), mem);
    EXPECT_EQ(b.capacity(), huge);
    EXPECT_EQ(host_buffer::pooled_bytes(), pooled - huge);  // the tail stays pooled
    host_buffer c;
    c.resize(huge);
    EXPECT_EQ(c.data(), mem + huge);
}

// Last: the refill thread it starts lives on for the rest of the process.
TEST(HostBuffer, TheReserveIsFaultedInAheadOfNeed) {
    host_buffer a;
    a.resize(3 * 1000 * 1000);  // the size the reserve's blocks follow
    host_buffer::keep_reserve(size_t(8) << 20);
    for (int i = 0; i < 500 && host_buffer::pooled_bytes() < (size_t(8) << 20); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_GE(host_buffer::pooled_bytes(), size_t(8) << 20);
    // Taking from it triggers a refill back to the target.
    host_buffer b;
    b.resize(3 * 1000 * 1000);
    for (int i = 0; i < 500 && host_buffer::pooled_bytes() < (size_t(8) << 20); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_GE(host_buffer::pooled_bytes(), size_t(8) << 20);
    host_buffer::keep_reserve(0);
}
