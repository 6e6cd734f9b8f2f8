// Relay threads' scheduling class (util/relay_sched.h): SCHED_BATCH on, SCHED_OTHER off, per
// thread, and a thread that was never switched stays as it was.
#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

#include "util/relay_sched.h"

using namespace sf;

TEST(RelaySched, SwitchesOnlyTheCallingThreadBetweenBatchAndOther) {
    relay_scheduling(false);  // from the default class, whatever the test runner started in
    ASSERT_EQ(sched_getscheduler(0), SCHED_OTHER);
    int other_thread_policy = -1;
    relay_scheduling(true);
    EXPECT_EQ(sched_getscheduler(0), SCHED_BATCH);
    relay_scheduling(true);  // again: still batch (the remembered state is not toggled)
    EXPECT_EQ(sched_getscheduler(0), SCHED_BATCH);
    // A thread started now inherits the class (pthread default); it can switch back, and that
    // does not touch this one.
    int inherited = -1;
    std::thread t([&] {
        inherited = sched_getscheduler(0);
        relay_scheduling(false);
        other_thread_policy = sched_getscheduler(0);
    });
    t.join();
    EXPECT_EQ(sched_getscheduler(0), SCHED_BATCH);
    relay_scheduling(false);
    EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
    EXPECT_EQ(inherited, SCHED_BATCH);
    EXPECT_EQ(other_thread_policy, SCHED_OTHER);
}
