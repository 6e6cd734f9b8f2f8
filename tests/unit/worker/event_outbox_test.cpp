// The worker's Events-stream outbox (worker/event_outbox.h) and the head's mailbox
// (session/worker_events.h): batching per tick, binding and cancellation, order of tokens.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "session/worker_events.h"
#include "worker/event_outbox.h"

using namespace sf;
using namespace std::chrono_literals;
namespace pb = superfluid::worker::v1;

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

// A session bound to `box` as Generate binds it.
std::shared_ptr<event_channel> bound(const std::shared_ptr<event_outbox> &box, const char *id) {
    auto ch = std::make_shared<event_channel>(box, id);
    EXPECT_TRUE(box->bind(id, ch));
    return ch;
}

pb::GenerateEvent pb_token(uint32_t i) {
    pb::GenerateEvent ev;
    ev.mutable_token()->set_index(i);
    return ev;
}

}  // namespace

TEST(EventOutbox, OneTickOfSeveralSessionsIsOneTake) {
    auto box = std::make_shared<event_outbox>(7);
    auto a   = bound(box, "a");
    auto b   = bound(box, "b");
    // What the tick thread does: each sequence's event, then flush at the tick's end.
    std::thread tick([&] {
        std::this_thread::sleep_for(20ms);
        a->push(token(0));
        b->push(token(0));
        a->push(token(1));
        box->flush();
    });
    std::vector<std::pair<std::string, session_event>> got;
    ASSERT_TRUE(box->take(got, 5s));
    tick.join();
    ASSERT_EQ(got.size(), 3u) << "the tick's events leave together, not one per wake-up";
    EXPECT_EQ(got[0].first, "a");
    EXPECT_EQ(got[1].first, "b");
    EXPECT_EQ(got[2].first, "a");
    EXPECT_EQ(got[2].second.index, 1u);
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
    EXPECT_FALSE(box->cancel("a")) << "a finished session is no longer bound";
    EXPECT_TRUE(box->cancel("b"));
    EXPECT_TRUE(b->cancelled());
    auto c = bound(box, "c");
    box->close();
    EXPECT_TRUE(c->cancelled()) << "nobody reads a closed stream: its sessions stop";
    EXPECT_TRUE(box->closed());
    EXPECT_FALSE(box->bind("d", std::make_shared<event_channel>(box, "d")));
    c->push(token(0));  // dropped
    std::vector<std::pair<std::string, session_event>> got;
    EXPECT_FALSE(box->take(got, 10ms));
}

TEST(EventMailbox, TokensBeforeTheHandlerGoFirstAndTheFinishWaitsForThePump) {
    event_mailbox mb;
    mb.push(pb_token(0));
    mb.push(pb_token(1));
    std::vector<uint32_t> seen;
    mb.set_token_handler([&](pb::Token &t) { seen.push_back(t.index()); });
    EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1}));
    mb.push(pb_token(2));  // straight to the handler, on the pushing thread
    EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1, 2}));
    pb::GenerateEvent fin;
    fin.mutable_finished()->set_completion_tokens(3);
    mb.push(fin);
    pb::GenerateEvent ev;
    ASSERT_TRUE(mb.next(ev));
    EXPECT_TRUE(ev.has_finished());
    EXPECT_EQ(ev.finished().completion_tokens(), 3);
}

TEST(EventMailbox, LostAfterTheQueueAndInterruptAtOnce) {
    event_mailbox lost;
    pb::GenerateEvent fin;
    fin.mutable_finished();
    lost.push(fin);
    lost.lose();
    pb::GenerateEvent ev;
    EXPECT_TRUE(lost.next(ev)) << "what arrived before the stream ended is still read";
    EXPECT_FALSE(lost.next(ev));
    EXPECT_TRUE(lost.lost());

    event_mailbox cut;
    std::thread t([&] {
        std::this_thread::sleep_for(20ms);
        cut.interrupt();
    });
    EXPECT_FALSE(cut.next(ev)) << "a cancelled session's pump stops waiting";
    t.join();
    EXPECT_FALSE(cut.lost());
}
