// The worker service's gate over its running handlers (worker/call_gate.h).
#include "worker/call_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

using namespace sf;
using namespace std::chrono_literals;

TEST(CallGate, CloseWaitsForRunningCallsAndRefusesLaterOnes) {
    call_gate gate;
    std::atomic<bool> released{false};
    std::atomic<bool> closed{false};
    auto call = std::make_unique<call_gate::pass>(gate.enter());
    ASSERT_TRUE(*call);
    std::thread stopper([&] {
        gate.close();
        // What the worker destroys after close() may only go once the call has left.
        EXPECT_TRUE(released.load()) << "close() returned while a call was running";
        closed = true;
    });
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(closed.load());
    released = true;
    call.reset();
    stopper.join();
    EXPECT_TRUE(closed.load());
    EXPECT_FALSE(gate.enter()) << "a call arriving after close() must not start";
}

TEST(CallGate, CloseWithNoCallReturnsAtOnce) {
    call_gate gate;
    { auto p = gate.enter(); }
    gate.close();
    EXPECT_FALSE(gate.enter());
}
