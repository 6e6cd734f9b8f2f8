// placement/model_set (issue #40) over fake workers: a submission goes to its model's worker
// (the default for an unknown name), a model loads on first use, a keep_alive of 0 unloads it
// once idle, and with max_models a request for another model waits until a resident one is
// idle: a model with a running session is never unloaded for it.
#include "placement/model_set.h"

#include <gtest/gtest.h>

#include <future>
#include <random>

#include "../session/fake_worker_client.h"

namespace sf {
namespace {

using namespace std::chrono_literals;
using testing::fake_worker_client;

struct null_listener final : worker_listener {
    void on_events(uint64_t, std::vector<worker_event> &) override {}
    void on_stream_lost(uint64_t) override {}
};

// Three models a (the default), b, c over fakes whose sessions take 3 tokens.
struct harness {
    std::mutex mu;
    std::vector<fake_worker_client *> live{3, nullptr};  // the current load's fake per model
    std::vector<int> loads{0, 0, 0};
    null_listener sink;
    model_set set;

    explicit harness(model_set::options o)
        : set(
              {{"a", "/m/a.gguf"}, {"b", "/m/b.gguf"}, {"c", "/m/c.gguf"}}, 0,
              [this](size_t i, uint64_t base) {
                  auto f = std::make_unique<fake_worker_client>(3, base);
                  std::lock_guard lk(mu);
                  live[i] = f.get();
                  ++loads[i];
                  return f;
              },
              o) {
        set.set_listener(&sink);
        EXPECT_TRUE(set.start());
    }
    fake_worker_client &fake(size_t i) {
        std::lock_guard lk(mu);
        return *live[i];
    }
    int load_count(size_t i) {
        std::lock_guard lk(mu);
        return loads[i];
    }
    bool submit(const std::string &model, const std::string &id,
                int64_t keep_alive_ms = generate_request::k_keep_alive_unset) {
        worker_submission sub;
        sub.session_id            = id;
        sub.epoch                 = 1;
        sub.request.model         = model;
        sub.request.keep_alive_ms = keep_alive_ms;
        accepted_session acc;
        start_error err;
        return set.submit(sub, acc, err);
    }
    // Ticks model i's worker until its sessions are finished.
    void finish_all(size_t i) {
        std::mt19937 rng(1);
        for (int t = 0; t < 5; ++t) fake(i).tick(rng);
    }
    model_report report(size_t i) { return set.models()[i]; }
};

// Polls `pred` for up to 5 s.
template <class P>
bool eventually(P pred) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) return true;
        std::this_thread::sleep_for(5ms);
    }
    return pred();
}

TEST(ModelSet, SubmissionsGoToTheirModelLoadedOnFirstUse) {
    harness h({});
    EXPECT_TRUE(eventually([&] { return h.report(0).state == "resident"; }));
    EXPECT_EQ(h.report(1).state, "unloaded");
    ASSERT_TRUE(h.submit("b", "s1"));
    EXPECT_EQ(h.load_count(1), 1);
    EXPECT_TRUE(h.fake(1).running("s1"));
    ASSERT_TRUE(h.submit("b:latest", "s9"));  // Ollama's name for b
    EXPECT_TRUE(h.fake(1).running("s9"));
    ASSERT_TRUE(h.submit("no-such-model", "s2"));  // an unknown name: the default
    EXPECT_TRUE(h.fake(0).running("s2"));
    EXPECT_FALSE(h.fake(1).running("s2"));
    // Each load has its own stream ids; stream_open asks the right worker.
    EXPECT_NE(h.fake(0).stream_id() >> 40, h.fake(1).stream_id() >> 40);
    EXPECT_TRUE(h.set.stream_open(h.fake(1).stream_id()));
    EXPECT_EQ(h.report(1).sessions, 2);
    h.finish_all(1);
    EXPECT_EQ(h.report(1).sessions, 0);
    // Idle with the server's keep-alive (5 min): resident, expiring; the default never expires.
    EXPECT_EQ(h.report(1).state, "resident");
    EXPECT_GT(h.report(1).expires_in_ms, 60000);
    EXPECT_EQ(h.report(0).expires_in_ms, -1);
}

TEST(ModelSet, KeepAliveZeroUnloadsOnceIdleNotBefore) {
    harness h({});
    ASSERT_TRUE(h.submit("b", "s1", 0));
    EXPECT_TRUE(h.fake(1).running("s1"));
    EXPECT_EQ(h.report(1).state, "resident");  // running: kept
    h.finish_all(1);
    EXPECT_TRUE(eventually([&] { return h.report(1).state == "unloaded"; }));
    ASSERT_TRUE(h.submit("b", "s2"));  // loads again on its next request
    EXPECT_EQ(h.load_count(1), 2);
}

TEST(ModelSet, MaxModelsWaitsForAnIdleModelAndNeverUnloadsAWorkingOne) {
    model_set::options o;
    o.max_models = 2;
    harness h(o);
    ASSERT_TRUE(h.submit("a", "s1"));
    ASSERT_TRUE(h.submit("b", "s2"));
    auto c = std::async(std::launch::async, [&] { return h.submit("c", "s3"); });
    EXPECT_TRUE(eventually([&] { return h.report(2).waiting == 1; }));
    EXPECT_EQ(h.load_count(2), 0);
    EXPECT_EQ(h.report(0).state, "resident");
    EXPECT_EQ(h.report(1).state, "resident");
    h.finish_all(0);  // a is idle now: it makes room, b keeps working
    ASSERT_TRUE(c.get());
    EXPECT_EQ(h.report(0).state, "unloaded");
    EXPECT_EQ(h.report(1).state, "resident");
    EXPECT_TRUE(h.fake(1).running("s2"));
    EXPECT_TRUE(h.fake(2).running("s3"));
    EXPECT_EQ(h.load_count(2), 1);
}

TEST(ModelSet, ALostStreamKeepsItsSessionsCountedUntilResubmitted) {
    model_set::options o;
    o.keep_alive = 0ms;
    harness h(o);
    ASSERT_TRUE(h.submit("b", "s1"));
    h.fake(1).lose_stream();  // the worker died: the session will be resubmitted
    EXPECT_EQ(h.report(1).sessions, 1);
    EXPECT_EQ(h.report(1).state, "resident");  // not unloaded under it (keep-alive 0)
    h.fake(1).restart();
    worker_submission sub;
    sub.session_id    = "s1";
    sub.epoch         = 2;
    sub.request.model = "b";
    accepted_session acc;
    start_error err;
    ASSERT_TRUE(h.set.submit(sub, acc, err));
    h.finish_all(1);
    EXPECT_TRUE(eventually([&] { return h.report(1).state == "unloaded"; }));
}

}  // namespace
}  // namespace sf
