// The worker's Events-stream outbox (worker/event_outbox.h): batching per tick, binding per
// placement (session, epoch), cancellation.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "worker/event_outbox.h"

using namespace sf;
using namespace std::chrono_literals;

namespace {

session_event token(uint32_t i) {
    session_event ev;
    ev.index = i;
    ev.token = static_cast<token_id>(100 + i);
    ev.text  = "t" + std::to_string(i);
    return ev;
}

session_event finished() {
    session_event ev;
    ev.type   = session_event::kind::FINISHED;
    ev.reason = finish_reason::LENGTH;
    return ev;
}

// An outbox closed when the test ends, as worker_service::Events closes it on every exit: a bound
// channel holds its outbox (its sink) and the outbox holds the channel, so only close() (or the
// session's FINISHED) frees them.
struct closing_outbox {
    std::shared_ptr<event_outbox> box;
    explicit closing_outbox(uint64_t stream_id) : box(std::make_shared<event_outbox>(stream_id)) {}
    ~closing_outbox() { box->close(); }
    event_outbox *operator->() const { return box.get(); }
    operator const std::shared_ptr<event_outbox> &() const { return box; }
};

// A placement bound to `box` as Submit binds it.
std::shared_ptr<event_channel> bound(const std::shared_ptr<event_outbox> &box, const char *id,
                                     uint64_t epoch = 1) {
    auto ch = std::make_shared<event_channel>(box, id, epoch);
    EXPECT_TRUE(box->bind(id, epoch, ch));
    return ch;
}

}  // namespace

TEST(EventOutbox, OneTickOfSeveralSessionsIsOneTake) {
    closing_outbox box(7);
    auto a = bound(box, "a");
    auto b = bound(box, "b");
    // What the tick thread does: each sequence's event, then flush at the tick's end.
    std::thread tick([&] {
        std::this_thread::sleep_for(20ms);
        a->push(token(0));
        b->push(token(0));
        a->push(token(1));
        box->flush();
    });
    std::vector<outbox_event> got;
    ASSERT_TRUE(box->take(got, 5s));
    tick.join();
    ASSERT_EQ(got.size(), 3u) << "the tick's events leave together, not one per wake-up";
    EXPECT_EQ(got[0].session_id, "a");
    EXPECT_EQ(got[1].session_id, "b");
    EXPECT_EQ(got[2].session_id, "a");
    EXPECT_EQ(got[2].ev.index, 1u);
    EXPECT_EQ(got[2].epoch, 1u);
    // Nothing queued: a take times out empty.
    got.clear();
    EXPECT_FALSE(box->take(got, 10ms));
    // An event queued outside a tick (no flush) still leaves, at the timeout.
    a->push(token(2));
    EXPECT_TRUE(box->take(got, 10ms));
    EXPECT_EQ(got.size(), 1u);
}

TEST(EventOutbox, FinishUnbindsAndCloseCancelsTheRest) {
    auto box = std::make_shared<event_outbox>(1);
    auto a   = bound(box, "a");
    auto b   = bound(box, "b");
    a->push(finished());
    EXPECT_FALSE(box->cancel("a", 0)) << "a finished session is no longer bound";
    EXPECT_FALSE(box->cancel("b", 2)) << "another placement's epoch cancels nothing";
    EXPECT_TRUE(box->cancel("b", 1));
    EXPECT_TRUE(b->cancelled());
    auto c = bound(box, "c");
    box->close();
    EXPECT_TRUE(c->cancelled()) << "nobody reads a closed stream: its sessions stop";
    EXPECT_TRUE(box->closed());
    EXPECT_FALSE(box->bind("d", 1, std::make_shared<event_channel>(box, "d", 1)));
    c->push(token(0));  // dropped
    std::vector<outbox_event> got;
    EXPECT_FALSE(box->take(got, 10ms));
}

TEST(EventOutbox, ANewerPlacementReplacesTheOlderOne) {
    closing_outbox box(3);
    auto older = bound(box, "s", 1);
    auto newer = bound(box, "s", 2);
    EXPECT_TRUE(older->cancelled()) << "the resubmitted session's older sequence stops";
    EXPECT_FALSE(newer->cancelled());
    older->push(finished());  // the older placement's finish must not unbind the newer one
    EXPECT_TRUE(box->cancel("s", 2));
    EXPECT_TRUE(newer->cancelled());
    std::vector<outbox_event> got;
    ASSERT_TRUE(box->take(got, 10ms));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].epoch, 1u) << "events leave with their placement's epoch";
}
