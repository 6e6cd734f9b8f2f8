// The session layer (session_manager: registry, relay, resumer) against a fake worker_client:
// whatever the event stream does (duplicates, reorders, drops, the worker lost at any point,
// lost again while the session is being resubmitted, a cancel racing the finish), a client
// reading the session sees every index exactly once, in order, then one finish, and the
// journal holds the same tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "fake_worker_client.h"
#include "session/session_manager.h"

using namespace sf;
using namespace sf::testing;
using namespace std::chrono_literals;

namespace {

// A session manager over a fake worker, journaled into a fresh SQLite file.
struct rig {
    explicit rig(uint32_t n_tokens) {
        static int counter = 0;
        dir                = std::filesystem::temp_directory_path() /
              ("sf_session_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        auto w = std::make_unique<fake_worker_client>(n_tokens);
        fake   = w.get();
        mgr    = std::make_unique<session_manager>(std::move(w));
        journal::options o;
        o.path  = (dir / "journal.db").string();
        auto db = std::make_unique<journal::store>();
        std::string err;
        EXPECT_TRUE(db->open(o, err)) << err;
        journal_store = db.get();
        mgr->use_journal(std::make_unique<journal::writer>(std::move(db)));
        EXPECT_TRUE(mgr->start_worker());
        n = n_tokens;
    }
    ~rig() {
        mgr->stop();
        mgr.reset();
        std::filesystem::remove_all(dir);
    }
    std::shared_ptr<session> start() {
        generate_request req;
        req.is_chat = false;
        req.prompt  = "hello";
        req.model   = "m";
        start_error err;
        auto s = mgr->start(req, err);
        EXPECT_TRUE(s) << err.message;
        return s;
    }
    // Ticks the fake worker (this thread is its event thread) until every session finished.
    void run(const std::vector<std::shared_ptr<session>> &ss, std::mt19937 &rng,
             const fault_rates &f = {}, double p_lose = 0, int max_ticks = 20000) {
        std::bernoulli_distribution lose(p_lose);
        for (int t = 0; t < max_ticks; ++t) {
            if (std::all_of(ss.begin(), ss.end(), [](auto &s) { return s->finished(); })) return;
            if (p_lose > 0 && lose(rng)) {
                fake->lose_stream();
                std::this_thread::sleep_for(1ms);
                fake->restart();
            }
            fake->tick(rng, f);
            std::this_thread::sleep_for(200us);  // the resumer's and journal's turn
        }
        ADD_FAILURE() << "sessions did not finish within " << max_ticks << " ticks";
    }
    // Everything a client reading `s` from the start sees.
    static std::pair<std::vector<session_event>, std::optional<session_event>> read_all(
        session &s) {
        std::vector<session_event> toks;
        std::optional<session_event> fin;
        while (!fin) {
            std::vector<session_event> got;
            s.read(toks.size(), got, fin, 100ms);
            toks.insert(toks.end(), got.begin(), got.end());
        }
        return {toks, fin};
    }
    // The client and the journal both see tokens 0..n-1 once, in order, and one LENGTH finish.
    void expect_exactly_once(session &s) {
        auto [toks, fin] = read_all(s);
        ASSERT_EQ(toks.size(), n) << s.id();
        for (uint32_t i = 0; i < n; ++i) {
            const auto ref = reference_token(s.id(), i);
            ASSERT_EQ(toks[i].index, i) << s.id();
            ASSERT_EQ(toks[i].token, ref.token) << s.id() << " index " << i;
            ASSERT_EQ(toks[i].text, ref.text);
        }
        ASSERT_TRUE(fin);
        EXPECT_EQ(fin->reason, finish_reason::LENGTH) << fin->error;
        // Wait for the finish row (committed before the reader saw it) and compare.
        auto stored = std::optional<journal::stored_session>{};
        for (int i = 0; i < 100 && !(stored && stored->finish); ++i) {
            stored = journal_db()->load(s.id());
            if (!(stored && stored->finish)) std::this_thread::sleep_for(10ms);
        }
        ASSERT_TRUE(stored && stored->finish) << "the journal holds the session's end";
        ASSERT_EQ(stored->tokens.size(), n);
        for (uint32_t i = 0; i < n; ++i) {
            EXPECT_EQ(stored->tokens[i].index, i);
            EXPECT_EQ(stored->tokens[i].token, toks[i].token);
        }
        EXPECT_EQ(stored->finish->reason, finish_reason::LENGTH);
    }
    journal::store *journal_db() { return journal_store; }
    // The worker dies and comes back; true once the session runs on it again.
    bool kill_and_wait_resubmitted(const std::string &id) {
        fake->lose_stream();
        fake->restart();
        for (int i = 0; i < 200 && !fake->running(id); ++i) std::this_thread::sleep_for(5ms);
        return fake->running(id);
    }

    std::filesystem::path dir;
    fake_worker_client *fake = nullptr;
    std::unique_ptr<session_manager> mgr;
    journal::store *journal_store = nullptr;
    uint32_t n                    = 0;
};

worker_event tok(const std::string &id, uint64_t epoch, uint32_t i) {
    return {id, epoch, reference_token(id, i)};
}

// An event of a placement that is no longer current: different bytes, so taking it shows.
worker_event stale(const std::string &id, uint64_t epoch, uint32_t i) {
    auto we = tok(id, epoch, i);
    we.ev.token += 1;
    we.ev.text = "stale ";
    return we;
}

worker_event fin(const std::string &id, uint64_t epoch, int32_t n) {
    worker_event we{id, epoch, {}};
    we.ev.type              = session_event::kind::FINISHED;
    we.ev.reason            = finish_reason::LENGTH;
    we.ev.completion_tokens = n;
    return we;
}

}  // namespace

TEST(SessionRelay, DuplicatedEventsAreDeliveredOnce) {
    rig r(4);
    auto s        = r.start();
    const auto id = s->id();
    const auto e  = r.fake->epoch_of(id);
    r.fake->send({tok(id, e, 0), tok(id, e, 0), tok(id, e, 1)});
    r.fake->send({tok(id, e, 1), tok(id, e, 2), tok(id, e, 3), tok(id, e, 2)});
    r.fake->send({fin(id, e, 4), fin(id, e, 4)});
    r.expect_exactly_once(*s);
}

TEST(SessionRelay, EventsReorderedWithinAMessageArriveInOrder) {
    rig r(4);
    auto s        = r.start();
    const auto id = s->id();
    const auto e  = r.fake->epoch_of(id);
    r.fake->send({fin(id, e, 4), tok(id, e, 2), tok(id, e, 0), tok(id, e, 3), tok(id, e, 1)});
    r.expect_exactly_once(*s);
    EXPECT_EQ(r.fake->submissions().size(), 1u) << "nothing was missing: no resubmission";
}

TEST(SessionRelay, ATokenDroppedBeforeTheFinishIsGeneratedAgain) {
    rig r(4);
    auto s        = r.start();
    const auto id = s->id();
    const auto e  = r.fake->epoch_of(id);
    r.fake->send({tok(id, e, 0), tok(id, e, 2), tok(id, e, 3), fin(id, e, 4)});  // 1 dropped
    // The relay resubmits from what it has (token 0); the fake's new placement continues.
    for (int i = 0; i < 200 && r.fake->submissions().size() < 2; ++i)
        std::this_thread::sleep_for(5ms);
    auto subs = r.fake->submissions();
    ASSERT_EQ(subs.size(), 2u);
    EXPECT_EQ(subs[1].resume_tokens, std::vector<token_id>{reference_token(id, 0).token});
    EXPECT_GT(subs[1].epoch, e);
    std::mt19937 rng(1);
    r.run({s}, rng);
    r.expect_exactly_once(*s);
}

TEST(SessionRelay, WorkerLostMidStreamResumesFromTheJournalAndDropsTheOldEpoch) {
    rig r(6);
    auto s        = r.start();
    const auto id = s->id();
    const auto e1 = r.fake->epoch_of(id);
    r.fake->send({tok(id, e1, 0), tok(id, e1, 1), tok(id, e1, 2)});
    ASSERT_TRUE(r.kill_and_wait_resubmitted(id)) << "resubmitted on the restarted worker";
    auto subs = r.fake->submissions();
    ASSERT_EQ(subs.size(), 2u);
    EXPECT_EQ(subs[1].resume_tokens.size(), 3u);
    // A late event of the lost placement (the old epoch) must not count.
    r.fake->send({stale(id, e1, 3), fin(id, e1, 4)});
    std::mt19937 rng(2);
    r.run({s}, rng);
    r.expect_exactly_once(*s);
}

// A lost worker loses all its sessions at once; they are resubmitted together, not one behind
// another (issue #39: "resubmission of many sessions at once").
TEST(SessionRelay, SessionsLostTogetherAreResubmittedTogether) {
    rig r(6);
    std::vector<std::shared_ptr<session>> ss;
    for (int i = 0; i < 8; ++i) ss.push_back(r.start());
    r.fake->set_submit_delay(1000ms);
    r.fake->lose_stream();
    r.fake->restart();
    const auto all_running = [&] {
        return std::all_of(ss.begin(), ss.end(), [&](auto &s) { return r.fake->running(s->id()); });
    };
    for (int i = 0; i < 1000 && !all_running(); ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(all_running()) << "all 8 resubmitted";
    EXPECT_EQ(r.fake->max_submits_in_flight(), 8) << "the 8 submits overlapped";
    r.fake->set_submit_delay(0ms);
    std::mt19937 rng(5);
    r.run(ss, rng);
    for (auto &s : ss) r.expect_exactly_once(*s);
}

TEST(SessionRelay, WorkerLostAgainDuringTheResubmission) {
    rig r(5);
    auto s        = r.start();
    const auto id = s->id();
    const auto e  = r.fake->epoch_of(id);
    r.fake->send({tok(id, e, 0), tok(id, e, 1)});
    r.fake->fail_next_submits(1);  // the first resubmission finds the worker gone again
    ASSERT_TRUE(r.kill_and_wait_resubmitted(id)) << "resubmitted on the restarted worker";
    // ... and the second placement is lost right after it sent one token.
    const auto e2 = r.fake->epoch_of(id);
    r.fake->send({tok(id, e2, 2)});
    r.fake->lose_stream();
    r.fake->restart();
    for (int i = 0; i < 200 && r.fake->epoch_of(id) == 0; ++i) std::this_thread::sleep_for(5ms);
    r.fake->send({stale(id, e2, 3)});  // late, from the lost placement
    std::mt19937 rng(3);
    r.run({s}, rng);
    r.expect_exactly_once(*s);
    EXPECT_EQ(r.fake->submissions().size(), 4u);
}

TEST(SessionRelay, GivesUpAfterTooManyLosses) {
    rig r(50);
    auto s        = r.start();
    const auto id = s->id();
    for (int loss = 0; loss <= session_resumer::k_max_losses; ++loss) {
        for (int i = 0; i < 200 && !r.fake->running(id); ++i) std::this_thread::sleep_for(5ms);
        r.fake->lose_stream();
        r.fake->restart();
    }
    auto [toks, f] = rig::read_all(*s);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->reason, finish_reason::ERROR);
    EXPECT_NE(f->error.find("giving up"), std::string::npos) << f->error;
}

TEST(SessionRelay, CancelRacingTheFinishEndsOnceAndTheJournalAgrees) {
    for (int round = 0; round < 20; ++round) {
        rig r(3);
        auto s        = r.start();
        const auto id = s->id();
        const auto e  = r.fake->epoch_of(id);
        r.fake->send({tok(id, e, 0), tok(id, e, 1), tok(id, e, 2)});
        std::thread client([&] { s->cancel(); });
        r.fake->send({fin(id, e, 3)});
        client.join();
        auto [toks, f] = rig::read_all(*s);
        ASSERT_TRUE(f);
        ASSERT_EQ(toks.size(), 3u);
        std::optional<journal::stored_session> stored;
        for (int i = 0; i < 100 && !(stored && stored->finish); ++i) {
            stored = r.journal_db()->load(id);
            if (!(stored && stored->finish)) std::this_thread::sleep_for(5ms);
        }
        ASSERT_TRUE(stored && stored->finish);
        EXPECT_EQ(stored->finish->reason, f->reason);
        EXPECT_EQ(stored->tokens.size(), 3u);
    }
}

// A worker that stops (SIGTERM, its parent died) cancels its sequences; nobody asked for it,
// so the session moves (is resubmitted from its journaled tokens) instead of ending.
TEST(SessionRelay, ACancelTheHeadDidNotAskForMovesTheSession) {
    rig r(6);
    auto s              = r.start();
    const auto id       = s->id();
    const auto e        = r.fake->epoch_of(id);
    auto cancelled      = fin(id, e, 2);
    cancelled.ev.reason = finish_reason::CANCELLED;
    r.fake->send({tok(id, e, 0), tok(id, e, 1), cancelled});
    for (int i = 0; i < 200 && r.fake->submissions().size() < 2; ++i)
        std::this_thread::sleep_for(5ms);
    auto subs = r.fake->submissions();
    ASSERT_EQ(subs.size(), 2u) << "resubmitted, not ended";
    EXPECT_EQ(subs[1].resume_tokens.size(), 2u);
    EXPECT_EQ(r.mgr->relay_stats().unasked_ends, 1u);
    std::mt19937 rng(5);
    r.run({s}, rng);
    r.expect_exactly_once(*s);
}

// A node the session is not placed on (another event stream) writes tokens and a finish for
// its current epoch: refused and counted; the client's text is the placement's own.
TEST(SessionRelay, EventsFromAnotherStreamAreRefused) {
    rig r(4);
    auto s           = r.start();
    const auto id    = s->id();
    const auto e     = r.fake->epoch_of(id);
    const auto other = r.fake->stream_id() + 7;
    r.fake->send_on(other, {stale(id, e, 0), stale(id, e, 1), fin(id, e, 2)});
    EXPECT_EQ(r.mgr->relay_stats().refused, 3u);
    // Far ahead of the next index on the right stream: not buffered without bound.
    r.fake->send({tok(id, e, 0), stale(id, e, 0 + session_relay::k_max_ahead + 5)});
    EXPECT_EQ(r.mgr->relay_stats().refused, 4u);
    std::mt19937 rng(6);
    r.run({s}, rng);
    r.expect_exactly_once(*s);
}

// The session moved and is waiting to be placed again (lost, worker down): a node that guesses
// epochs near its old one writes under epochs the session never had. Those are refused, while
// late events of its own lost placement are only dropped; neither reaches the client.
TEST(SessionRelay, EventsUnderAnEpochNeverGivenAreRefusedWhileTheSessionWaits) {
    rig r(4);
    auto s        = r.start();
    const auto id = s->id();
    const auto e  = r.fake->epoch_of(id);
    r.fake->send({tok(id, e, 0)});
    r.fake->lose_stream();  // not restarted yet: the session waits, lost
    const auto other = r.fake->stream_id() + 7;
    r.fake->send_on(other, {stale(id, e + 3, 1), stale(id, e + 40, 1), fin(id, e + 41, 2)});
    EXPECT_EQ(r.mgr->relay_stats().refused, 3u);
    r.fake->send({stale(id, e, 1)});  // its own lost placement, late
    EXPECT_EQ(r.mgr->relay_stats().refused, 3u);
    r.fake->restart();
    std::mt19937 rng(7);
    r.run({s}, rng);
    r.expect_exactly_once(*s);
}

// The session ended (it moved, then finished elsewhere) before the node that once held it
// writes into it: events under epochs it never had are still refused, a late one of its own
// is only dropped, and the ended session's text and journal stay as they were.
TEST(SessionRelay, EventsUnderAnEpochNeverGivenAreRefusedAfterTheSessionEnded) {
    rig r(4);
    auto s        = r.start();
    const auto id = s->id();
    const auto e  = r.fake->epoch_of(id);
    std::mt19937 rng(8);
    r.run({s}, rng);
    r.expect_exactly_once(*s);
    const auto refused = r.mgr->relay_stats().refused;
    const auto dropped = r.mgr->relay_stats().dropped;
    const auto other   = r.fake->stream_id() + 7;
    r.fake->send_on(other, {stale(id, e + 1, 0), stale(id, e + 63, 4), fin(id, e + 64, 5)});
    EXPECT_EQ(r.mgr->relay_stats().refused, refused + 3);
    r.fake->send({stale(id, e, 4)});  // its own placement, late: dropped, not refused
    EXPECT_EQ(r.mgr->relay_stats().refused, refused + 3);
    EXPECT_EQ(r.mgr->relay_stats().dropped, dropped + 4);
    r.fake->send_on(other, {stale("no-such-session", e + 1, 0)});  // never known: dropped
    EXPECT_EQ(r.mgr->relay_stats().refused, refused + 3);
    r.expect_exactly_once(*s);
}

TEST(SessionRelay, ACancelWhileLostIsNotResubmitted) {
    rig r(8);
    auto s        = r.start();
    const auto id = s->id();
    r.fake->send({tok(id, r.fake->epoch_of(id), 0)});
    r.fake->lose_stream();  // not restarted: the resumer waits for the worker
    s->cancel();
    auto [toks, f] = rig::read_all(*s);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->reason, finish_reason::CANCELLED);
    EXPECT_EQ(toks.size(), 1u);
    r.fake->restart();
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(r.fake->submissions().size(), 1u);
}

// Many sessions, every fault at random, several seeds.
TEST(SessionRelay, RandomFaultsNeverLoseOrRepeatAToken) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
        rig r(40);
        std::vector<std::shared_ptr<session>> ss;
        for (int i = 0; i < 6; ++i) ss.push_back(r.start());
        std::mt19937 rng(seed);
        fault_rates f;
        f.duplicate = 0.2;
        f.reorder   = 0.3;
        f.drop      = 0.01;
        r.run(ss, rng, f, /*p_lose=*/0.005);
        for (auto &s : ss) r.expect_exactly_once(*s);
        if (HasFailure()) {
            ADD_FAILURE() << "seed " << seed;
            return;
        }
    }
}
