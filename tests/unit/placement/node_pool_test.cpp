// node_pool (placement/node_pool.h) against fake nodes: the tokenizer check, spreading
// concurrent placements, skipping a node whose stream was just lost, routing cancels, and
// the relay's view of stream ids.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "placement/node_pool.h"

using namespace sf;

namespace {

// A node that accepts everything: ready with `slots` sequences, the given tokenizer.
class fake_node final : public worker_client {
  public:
    fake_node(uint64_t base, int slots, std::string tokenizer)
        : base_(base), slots_(slots), tokenizer_(std::move(tokenizer)) {}
    void set_listener(worker_listener *l) override { listener_ = l; }
    bool start() override { return true; }
    void stop() override { stopped = true; }
    bool submit(const worker_submission &sub, accepted_session &acc, start_error &) override {
        std::lock_guard lk(mu);
        sessions.push_back(sub.session_id);
        acc.stream = base_ + 1;
        return true;
    }
    void cancel(const std::string &id, uint64_t) override {
        std::lock_guard lk(mu);
        cancels.push_back(id);
    }
    bool stream_open(uint64_t stream) override { return stream == base_ + 1; }
    bool render(const worker_submission &, accepted_session &, start_error &) override {
        return true;
    }
    bool embed(const embed_batch &, std::vector<embedding> &, start_error &) override {
        return false;
    }
    bool model_info(model_description &out) override {
        out.tokenizer_fingerprint = tokenizer_;
        out.model_fingerprint     = "m";
        return true;
    }
    worker_health health() override {
        worker_health h;
        h.reachable         = true;
        h.status.ready      = true;
        h.status.n_parallel = slots_;
        return h;
    }
    counters stats() override { return {}; }
    void lose_stream() { listener_->on_stream_lost(base_ + 1); }

    std::mutex mu;
    std::vector<std::string> sessions, cancels;
    std::atomic<bool> stopped{false};

  private:
    uint64_t base_;
    int slots_;
    std::string tokenizer_;
    worker_listener *listener_ = nullptr;
};

struct null_listener final : worker_listener {
    void on_events(uint64_t, std::vector<worker_event> &) override {}
    void on_stream_lost(uint64_t) override { ++lost; }
    std::atomic<int> lost{0};
};

// Adds a fake node; `out` receives its client (owned by the pool).
void add(node_pool &pool, const std::string &name, int slots, const std::string &tok,
         fake_node *&out, bool reference = false) {
    pool.add_node(
        name, reference ? "" : name + ":1",
        [&, slots, tok](uint64_t base) {
            auto n = std::make_unique<fake_node>(base, slots, tok);
            out    = n.get();
            return n;
        },
        reference);
}

// Polls until `pred` holds (at most 5 s: the pool's monitor polls every 500 ms).
template <class F>
bool eventually(F pred) {
    for (int i = 0; i < 100; ++i) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pred();
}

bool submit(node_pool &pool, const std::string &id, accepted_session &acc) {
    worker_submission sub;
    sub.session_id = id;
    sub.epoch      = 1;
    start_error err;
    return pool.submit(sub, acc, err);
}

}  // namespace

TEST(node_pool, a_node_with_another_tokenizer_is_refused_and_never_placed_on) {
    node_pool pool;
    null_listener l;
    pool.set_listener(&l);
    fake_node *local = nullptr, *same = nullptr, *other = nullptr;
    add(pool, "local", 2, "tok-A", local, true);
    add(pool, "same", 2, "tok-A", same);
    add(pool, "other", 8, "tok-B", other);
    ASSERT_TRUE(pool.start());
    ASSERT_TRUE(eventually([&] { return pool.heartbeat("same").state == "active"; }));
    ASSERT_TRUE(eventually([&] { return other->stopped.load(); }));
    const node_report r = pool.heartbeat("other");
    EXPECT_EQ(r.state, "refused");
    EXPECT_NE(r.message.find("tokenizer"), std::string::npos) << r.message;
    EXPECT_EQ(pool.heartbeat("other").name, "") << "a refused node is forgotten once told";
    accepted_session acc;
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(submit(pool, "s" + std::to_string(i), acc));
    EXPECT_TRUE(other->sessions.empty());
    EXPECT_EQ(local->sessions.size() + same->sessions.size(), 4u);
    pool.stop();
}

TEST(node_pool, placements_spread_by_free_slots_and_cancels_reach_the_session_s_node) {
    node_pool pool;
    null_listener l;
    pool.set_listener(&l);
    fake_node *a = nullptr, *b = nullptr;
    add(pool, "local", 2, "t", a, true);
    add(pool, "b", 2, "t", b);
    ASSERT_TRUE(pool.start());
    ASSERT_TRUE(eventually([&] { return pool.heartbeat("b").state == "active"; }));
    accepted_session acc;
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(submit(pool, "s" + std::to_string(i), acc));
    EXPECT_EQ(a->sessions.size(), 2u);
    EXPECT_EQ(b->sessions.size(), 2u);
    // The relay asks about a stream by its id: the pool finds the node from it.
    EXPECT_TRUE(pool.stream_open(acc.stream));
    EXPECT_FALSE(pool.stream_open(acc.stream + 1));
    pool.cancel(b->sessions[0], 1);
    EXPECT_EQ(b->cancels.size(), 1u);
    EXPECT_TRUE(a->cancels.empty());
    pool.stop();
}

TEST(node_pool, a_node_whose_stream_was_lost_is_skipped_and_its_sessions_forgotten) {
    node_pool pool;
    null_listener l;
    pool.set_listener(&l);
    fake_node *a = nullptr, *b = nullptr;
    add(pool, "local", 4, "t", a, true);
    add(pool, "b", 8, "t", b);
    ASSERT_TRUE(pool.start());
    ASSERT_TRUE(eventually([&] { return pool.heartbeat("b").state == "active"; }));
    accepted_session acc;
    ASSERT_TRUE(submit(pool, "s0", acc));
    ASSERT_EQ(b->sessions.size(), 1u);  // more free slots
    b->lose_stream();
    EXPECT_EQ(l.lost.load(), 1) << "the relay hears of the loss";
    ASSERT_TRUE(submit(pool, "s0", acc));  // the resumer's resubmission
    EXPECT_EQ(a->sessions.size(), 1u) << "not back to the node that just lost its stream";
    for (const auto &n : pool.nodes())
        if (n.name == "b") EXPECT_EQ(n.running, 0);
    pool.stop();
}
