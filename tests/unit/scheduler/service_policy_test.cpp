// Fairness within a class by least attained service (issue #18), driven tick by tick with
// step() on a fake clock: no thread, no sleep, no timing assertion.
#include "scheduler/service_policy.h"

#include <gtest/gtest.h>

#include "cache/prefix_cache.h"
#include "fake_engine.h"
#include "scheduler/scheduler.h"
#include "scheduler/tick_planner.h"

using namespace std::chrono_literals;
using sf::session_event;
using time_point = std::chrono::steady_clock::time_point;

namespace {

struct fake_clock {
    time_point t{std::chrono::hours(1)};
    void advance(std::chrono::milliseconds d) { t += d; }
};

sf::scheduler_options opts(fake_clock &clk, int budget) {
    sf::scheduler_options o;
    o.planner = {budget, budget};
    o.clock   = [&clk] { return clk.t; };
    return o;
}

std::shared_ptr<sf::event_channel> submit(sf::scheduler &s, const std::string &id, int prompt_len,
                                          int max_tokens, const std::string &client = "",
                                          sf::token_id first = 10) {
    auto ch = std::make_shared<sf::event_channel>();
    sf::sequence_request r;
    r.session_id = id;
    r.client     = client;
    r.prompt.assign(prompt_len, first);
    r.sampling.max_tokens = max_tokens;
    r.channel             = ch;
    s.submit(std::move(r));
    return ch;
}

// Events already pushed (the loop is driven by step(): nothing more arrives on its own).
std::vector<session_event> ready(sf::event_channel &ch) {
    std::vector<session_event> out;
    session_event ev;
    while (ch.pop(ev, 0ms)) out.push_back(ev);
    return out;
}

std::vector<sf::token_id> tokens(const std::vector<session_event> &evs) {
    std::vector<sf::token_id> t;
    for (const auto &e : evs)
        if (e.type == session_event::kind::TOKEN) t.push_back(e.token);
    return t;
}

// Prompt tokens slot `seq` got in the engine's last decode.
size_t last_tokens_of(const sf::test::fake_engine &eng, int seq) {
    for (const auto &it : eng.calls.back())
        if (it.seq == seq) return it.tokens.size();
    return 0;
}

}  // namespace

TEST(DecayedCount, HalvesEveryHalfLife) {
    sf::decayed_count c;
    const time_point t0{std::chrono::hours(1)};
    c.add(1000, t0, 5000);
    EXPECT_DOUBLE_EQ(c.at_time(t0 + 5s, 5000), 500);
    EXPECT_DOUBLE_EQ(c.at_time(t0 + 10s, 5000), 250);
    c.add(100, t0 + 5s, 5000);
    EXPECT_DOUBLE_EQ(c.at_time(t0 + 5s, 5000), 600);
    EXPECT_DOUBLE_EQ(c.at_time(t0 + 1h, 0), 600);  // half-life 0: never forgotten
}

TEST(ServiceLedger, ForgetsClientsWhoseServiceDecayedAway) {
    sf::service_ledger l({.half_life_ms = 1000});
    sf::decayed_count a, b;
    const time_point t0{std::chrono::hours(1)};
    l.charge(a, "old", 4, t0);
    l.charge(b, "recent", 4000, t0 + 5s);
    l.prune(t0 + 5s);  // "old": 4 tokens halved 5 times, below one
    EXPECT_EQ(l.clients(), 1u);
    EXPECT_LT(l.rank(a, "old", t0 + 5s).client, l.rank(b, "recent", t0 + 5s).client);
}

TEST(TickPlanner, LeastServedPrefillGoesFirstAndTheLongestWaitingKeepsItsShare) {
    using sf::priority_class;
    // Slot 0: a long prompt, 2,000 tokens served, waiting since tick 1; slot 1: a newcomer
    // (nothing served, placed at tick 9); slot 2: another long prompt served at tick 8.
    std::vector<sf::plan_input> seqs = {
        {0, priority_class::NORMAL, 5000, false, 1, 1, {0, 2000}},
        {1, priority_class::NORMAL, 300, false, 9, 3, {0, 0}},
        {2, priority_class::NORMAL, 5000, false, 8, 2, {0, 1000}},
    };
    sf::planner_options o{512, 512};
    o.min_share = 0.125;  // 64 tokens of 512
    auto plan   = plan_tick(seqs, o);
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[0].slot, 0);  // the longest wait takes its share first
    EXPECT_EQ(plan[0].n_tokens, 64);
    EXPECT_EQ(plan[1].slot, 1);  // then the least served: the whole short prompt
    EXPECT_EQ(plan[1].n_tokens, 300);
    EXPECT_EQ(plan[2].slot, 2);  // what is left, in whole quanta
    EXPECT_EQ(plan[2].n_tokens, 128);
    // Without the share, attained service alone orders them.
    o.min_share = 0;
    plan        = plan_tick(seqs, o);
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0].slot, 1);
    EXPECT_EQ(plan[1].slot, 2);
    EXPECT_EQ(plan[1].n_tokens, 192);
    // A client's service ranks before a sequence's: the newcomer of a heavy client goes after
    // the long prompt of a light one.
    seqs[1].served = {9000, 0};
    plan           = plan_tick(seqs, o);
    EXPECT_EQ(plan[0].slot, 2);
}

TEST(TickPlanner, TheReservedPrefillTakesWhatTheOthersLeave) {
    using sf::priority_class;
    std::vector<sf::plan_input> seqs = {
        {0, priority_class::NORMAL, 5000, false, 1, 1, {0, 2000}},
        {1, priority_class::NORMAL, 100, false, 9, 2, {0, 0}},
    };
    sf::planner_options o{512, 512};
    o.min_share = 0.125;
    auto plan   = plan_tick(seqs, o);
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0].slot, 0);
    EXPECT_EQ(plan[0].n_tokens, 384);  // 64 reserved + the 412 left, in whole quanta
    EXPECT_EQ(plan[1].n_tokens, 100);
}

// The case: every sequence is busy with a long prompt; a short unmarked request arrives.
// In the next tick it takes a sequence (the most-served long one is parked) and its whole prompt
// is prefilled: its first token comes out of that tick.
TEST(ServicePolicy, AShortNewcomerIsServedInTheNextTickAmongLongPrefills) {
    fake_clock clk;
    sf::test::fake_engine eng;
    eng.seqs  = 8;
    eng.ctx   = 65536;
    eng.batch = 512 + 8;
    sf::scheduler s(eng, opts(clk, 512));
    std::vector<std::shared_ptr<sf::event_channel>> agents;
    for (int i = 0; i < 8; ++i) agents.push_back(submit(s, "agent-" + std::to_string(i), 7500, 64));
    for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(s.step());
        clk.advance(30ms);
    }
    auto chat = submit(s, "chat", 30, 4);
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.stats().preemptions, 1u);
    ASSERT_EQ(eng.parked_seqs.size(), 1u);
    const int slot = eng.parked_seqs[0];
    EXPECT_EQ(last_tokens_of(eng, slot), 30u) << "the whole prompt in one tick";
    auto evs = ready(*chat);
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].index, 0u);
    EXPECT_EQ(evs[0].type, session_event::kind::TOKEN);
    // The long prompts kept going in that tick too.
    size_t others = 0;
    for (const auto &it : eng.calls.back()) others += it.seq != slot ? it.tokens.size() : 0;
    EXPECT_GT(others, 0u);
}

// A newcomer with no free sequence waits while every running sequence is within its quantum of
// service (tokens, not time: an hour changes nothing), and gets the slot in the tick after the
// running one reaches it.
TEST(ServicePolicy, ASequenceHasItsQuantumOfServiceBeforeANewcomerParksIt) {
    fake_clock clk;
    sf::test::fake_engine eng;
    eng.seqs          = 1;
    auto o            = opts(clk, 64);
    o.service.quantum = 100;
    o.aging_ms        = 0;  // the hour below would promote the waiter a class: aging's business
    sf::scheduler s(eng, o);
    auto first = submit(s, "first", 10, 1000);
    ASSERT_TRUE(s.step());  // 10 prompt tokens
    auto second = submit(s, "second", 10, 2);
    clk.advance(1h);
    for (int i = 0; i < 90; ++i) ASSERT_TRUE(s.step());  // 90 decode steps: 100 tokens
    EXPECT_EQ(s.stats().preemptions, 0u);
    EXPECT_TRUE(ready(*second).empty());
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.stats().preemptions, 1u);
    EXPECT_EQ(tokens(ready(*second)).size(), 1u);
}

// The victim is the most-served sequence of the newcomer's class, clients first: client X's two
// sequences (320 + 300 tokens) outweigh client Y's one (520) although each of X's has less
// service than Y's. A newcomer of the heaviest client parks nobody of a lighter client.
TEST(ServicePolicy, TheMostServedClientsMostServedSequenceIsParkedFirst) {
    fake_clock clk;
    sf::test::fake_engine eng;
    eng.seqs          = 3;
    eng.batch         = 2048;
    auto o            = opts(clk, 2048);
    o.service.quantum = 100;
    sf::scheduler s(eng, o);
    auto x1 = submit(s, "x1", 299, 1000, "X");  // prompt + first decode step: 300 tokens
    auto x2 = submit(s, "x2", 280, 1000, "X");
    auto y1 = submit(s, "y1", 499, 1000, "Y");
    ASSERT_TRUE(s.step());  // all three prefilled in one tick (slots 0, 1, 2)
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(s.step());  // x2: 300 tokens, x1: 320, y1: 520
    clk.advance(1s);
    auto z = submit(s, "z", 8, 1000, "Z");
    ASSERT_TRUE(s.step());
    ASSERT_EQ(eng.parked_seqs.size(), 1u);
    EXPECT_EQ(eng.parked_seqs[0], 0) << "x1: client X's most-served sequence";
    // A newcomer of client X (still the most served: its parked sequence's service counts)
    // parks its own x2, not y1, which has more service of its own but belongs to a lighter client.
    clk.advance(1s);
    auto x3 = submit(s, "x3", 8, 1000, "X");
    ASSERT_TRUE(s.step());
    ASSERT_EQ(eng.parked_seqs.size(), 2u);
    EXPECT_EQ(eng.parked_seqs[1], 1) << "x2";
}

// A long prompt among newcomers that arrive every tick, each with a prompt as large as the tick:
// by attained service alone the newcomers would take every tick; min_share keeps the long prompt
// at one 64-token quantum of each 256-token tick, and nothing else changes.
TEST(ServicePolicy, ALongJobNeverGetsLessThanItsMinimumShare) {
    for (double share : {0.125, 0.0}) {
        fake_clock clk;
        sf::test::fake_engine eng;
        eng.seqs            = 2;
        eng.ctx             = 200000;
        eng.batch           = 256 + 2;
        auto o              = opts(clk, 256);
        o.service.min_share = share;
        o.service.quantum   = 1 << 30;  // no preemption: the share is the tick's
        sf::scheduler s(eng, o);
        auto long_job = submit(s, "long", 100000, 1);
        ASSERT_TRUE(s.step());
        size_t min_tokens = SIZE_MAX;
        std::vector<std::shared_ptr<sf::event_channel>> newcomers;
        for (int i = 0; i < 40; ++i) {
            newcomers.push_back(submit(s, "new-" + std::to_string(i), 256, 1));
            ASSERT_TRUE(s.step());
            clk.advance(30ms);
            min_tokens = std::min(min_tokens, last_tokens_of(eng, 0));
        }
        if (share > 0) {
            EXPECT_GE(min_tokens, 64u);
        } else {
            EXPECT_EQ(min_tokens, 0u) << "without the share the newcomers starve it";
        }
    }
}

// A sequence parked for a same-class newcomer resumes exactly where it stopped: its tokens are
// those of an uninterrupted run (the fake samples from a hash of the sequence's whole memory).
TEST(ServicePolicy, AParkedSequenceResumesByteIdentical) {
    auto run = [](bool interrupt) {
        fake_clock clk;
        sf::test::fake_engine eng;
        eng.seqs               = 1;
        eng.sample_from_memory = true;
        auto o                 = opts(clk, 64);
        o.service.quantum      = 64;
        sf::scheduler s(eng, o);
        auto ch = submit(s, "long", 100, 40, "", 7);
        std::shared_ptr<sf::event_channel> chat;
        for (int i = 0; i < 12; ++i) s.step();  // prefill (2 ticks) and 10 tokens
        if (interrupt) {
            clk.advance(1s);
            chat = submit(s, "chat", 5, 3);
        }
        while (s.step()) {
        }
        if (interrupt) {
            EXPECT_EQ(eng.parked_seqs.size(), 1u);
            EXPECT_EQ(eng.unparked.size(), 1u);
            EXPECT_EQ(tokens(ready(*chat)).size(), 3u);
        }
        auto evs = ready(*ch);
        EXPECT_EQ(evs.back().reason, sf::finish_reason::LENGTH);
        return evs;
    };
    auto plain = run(false), resumed = run(true);
    ASSERT_EQ(tokens(plain).size(), 40u);
    EXPECT_EQ(tokens(resumed), tokens(plain));
    for (size_t i = 0; i + 1 < resumed.size(); ++i) EXPECT_EQ(resumed[i].index, i);
}

// Skip-join: a sequence whose prompt alone is a quantum long is a long job from the start, and
// a newcomer may park it before it has had its quantum (its state is still small). Once parked
// and resumed, it keeps its slot for a full quantum of service.
TEST(ServicePolicy, ALongPromptMayBeParkedBeforeItsQuantumButOnlyOnce) {
    fake_clock clk;
    sf::test::fake_engine eng;
    eng.seqs          = 1;
    eng.ctx           = 65536;
    auto o            = opts(clk, 64);
    o.service.quantum = 512;
    sf::scheduler s(eng, o);
    auto agent = submit(s, "agent", 4000, 4);
    ASSERT_TRUE(s.step());  // 64 of its 4,000 prompt tokens
    auto chat = submit(s, "chat", 8, 1);
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.stats().preemptions, 1u) << "parked after 64 tokens of service";
    EXPECT_EQ(tokens(ready(*chat)).size(), 1u);
    ASSERT_TRUE(s.step());  // the chat finished: the agent is back
    ASSERT_EQ(eng.unparked.size(), 1u);
    auto chat2 = submit(s, "chat-2", 8, 1);
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(s.step());  // 8 x 64 = 512 tokens since it resumed
    EXPECT_EQ(s.stats().preemptions, 1u);
    EXPECT_TRUE(ready(*chat2).empty());
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.stats().preemptions, 2u);
    EXPECT_EQ(tokens(ready(*chat2)).size(), 1u);
}

// Skip-join parks early only while the state is small: a long prompt mostly supplied by the
// prefix cache (a big state, little service) keeps its slot until its quantum of service.
TEST(ServicePolicy, ALongPromptFromThePrefixCacheIsNotParkedBeforeItsQuantum) {
    fake_clock clk;
    sf::test::fake_engine eng;
    eng.seqs = 1;
    sf::cache::cache_options co;
    co.ram_bytes = 1 << 20;
    sf::cache::prefix_cache cache(eng, co);
    auto o            = opts(clk, 64);
    o.service.quantum = 128;
    o.cache           = &cache;
    sf::scheduler s(eng, o);
    auto req = [](const std::string &id, std::vector<sf::token_id> prompt, int max_tokens) {
        sf::sequence_request r;
        r.session_id          = id;
        r.prompt              = std::move(prompt);
        r.sampling.max_tokens = max_tokens;
        r.channel             = std::make_shared<sf::event_channel>();
        return r;
    };
    std::vector<sf::token_id> shared(200);
    for (int i = 0; i < 200; ++i) shared[i] = 100 + i;
    ASSERT_TRUE(s.submit(req("first", shared, 1)));
    while (s.step()) {
    }
    auto long_prompt = shared;
    long_prompt.insert(long_prompt.end(), 10, 7);
    auto agent = req("agent", long_prompt, 1000);
    auto ch    = agent.channel;
    ASSERT_TRUE(s.submit(std::move(agent)));
    ASSERT_TRUE(s.step());  // 200 tokens from the cache, 10 prefilled
    ASSERT_EQ(tokens(ready(*ch)).size(), 1u);
    auto chat = submit(s, "chat", 8, 1);
    for (int i = 0; i < 118; ++i) ASSERT_TRUE(s.step());  // 10 + 118 decode steps: 128
    EXPECT_EQ(s.stats().preemptions, 0u);
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.stats().preemptions, 1u);
    EXPECT_EQ(tokens(ready(*chat)).size(), 1u);
}
