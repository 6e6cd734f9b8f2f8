// The scheduler with a prefix cache over the fake engine, whose memory is the list of tokens
// each sequence holds: what was reused, what was decoded, and that the output is the same.
#include <gtest/gtest.h>

#include <numeric>

#include "cache/prefix_cache.h"
#include "fake_engine.h"
#include "scheduler/scheduler.h"

using namespace std::chrono_literals;
using sf::session_event;
using sf::token_id;

namespace {

std::vector<token_id> prompt_of(int shared, int distinct, int salt) {
    std::vector<token_id> p(shared + distinct);
    std::iota(p.begin(), p.begin() + shared, 100);
    for (int i = 0; i < distinct; ++i) p[shared + i] = 5000 + salt * 100 + i;
    return p;
}

struct run_result {
    std::vector<token_id> tokens;
    int32_t cached       = 0;
    int32_t first_cached = -1;  // what the first token said (usage before the end)
};

std::shared_ptr<sf::event_channel> submit(sf::scheduler &s, std::vector<token_id> prompt,
                                          std::vector<int32_t> boundaries = {},
                                          uint64_t scope                  = 0) {
    auto ch = std::make_shared<sf::event_channel>();
    sf::sequence_request r;
    r.session_id          = "s";
    r.cache_scope         = scope;
    r.prompt              = std::move(prompt);
    r.boundaries          = std::move(boundaries);
    r.sampling.max_tokens = 4;
    r.channel             = ch;
    s.submit(std::move(r));
    return ch;
}

run_result drain(sf::event_channel &ch) {
    run_result r;
    session_event ev;
    while (ch.pop(ev, 5s)) {
        if (ev.type == session_event::kind::FINISHED) {
            r.cached = ev.cached_tokens;
            break;
        }
        if (r.tokens.empty()) r.first_cached = ev.cached_tokens;
        r.tokens.push_back(ev.token);
    }
    return r;
}

size_t decoded_tokens(const sf::test::fake_engine &e) {
    size_t n = 0;
    for (const auto &c : e.calls)
        for (const auto &it : c) n += it.tokens.size();
    return n;
}

struct fixture {
    sf::test::fake_engine eng;
    std::unique_ptr<sf::cache::prefix_cache> cache;
    std::unique_ptr<sf::scheduler> sched;
    // One memory per sequence (the llama.cpp engine's KV streams): entries are host copies.
    explicit fixture(bool partial, int64_t ram = 1 << 20) {
        eng.partial            = partial;
        eng.sample_from_memory = true;
        sf::cache::cache_options co;
        co.ram_bytes = ram;
        cache        = std::make_unique<sf::cache::prefix_cache>(eng, co);
        sf::scheduler_options so;
        so.planner = {64, 64};
        so.cache   = cache.get();
        sched      = std::make_unique<sf::scheduler>(eng, so);
    }
    run_result run(std::vector<token_id> p, std::vector<int32_t> b = {}, uint64_t scope = 0) {
        auto ch = submit(*sched, std::move(p), std::move(b), scope);
        return drain(*ch);
    }
};

// The reference: the same prompt computed from scratch, no cache.
run_result scratch(std::vector<token_id> p) {
    fixture f(true, 0);
    f.sched->start();
    return f.run(std::move(p));
}

}  // namespace

TEST(PrefixCache, SharedKvPrefixIsReusedAndGivesTheSameTokens) {
    fixture f(true);
    f.sched->start();
    auto a = f.run(prompt_of(200, 10, 1));
    EXPECT_EQ(a.cached, 0);
    const size_t before = decoded_tokens(f.eng);
    auto b              = f.run(prompt_of(200, 10, 2));
    EXPECT_EQ(b.cached, 200);
    EXPECT_EQ(b.first_cached, 200);  // known with the first token, not only at the end
    // Only the distinct part and the generated tokens were decoded.
    EXPECT_EQ(decoded_tokens(f.eng) - before, 10u + 3u);
    EXPECT_EQ(b.tokens, scratch(prompt_of(200, 10, 2)).tokens);
    // Identical prompt: everything but the last token.
    auto c = f.run(prompt_of(200, 10, 2));
    EXPECT_EQ(c.cached, 209);
    EXPECT_EQ(c.tokens, b.tokens);
    EXPECT_EQ(f.eng.bad_positions, 0);
    f.sched->stop();
    auto st = f.cache->stats();
    EXPECT_EQ(st.lookups, 3u);
    EXPECT_EQ(st.hits, 2u);
    EXPECT_EQ(st.cached_tokens, 409u);
}

TEST(PrefixCache, MultiTurnContinuationReusesPromptAndAnswer) {
    fixture f(true);
    f.sched->start();
    auto p1 = prompt_of(100, 5, 1);
    auto a  = f.run(p1);
    // Turn 2 = turn 1's prompt + its answer (the last sampled token was never decoded) + more.
    auto p2 = p1;
    p2.insert(p2.end(), a.tokens.begin(), a.tokens.end());
    p2.insert(p2.end(), {7, 8, 9});
    auto b = f.run(p2);
    EXPECT_EQ(b.cached, static_cast<int32_t>(p1.size() + a.tokens.size() - 1));
    EXPECT_EQ(b.tokens, scratch(p2).tokens);
    f.sched->stop();
}

TEST(PrefixCache, SnapshotsAtMessageBoundariesOnRecurrentMemory) {
    fixture f(false);
    f.sched->start();
    // Message boundaries at 70 and 140: the second prompt shares 150 tokens, but only the
    // snapshot at 140 is reusable (a recurrent state cannot be cut back to 150).
    auto p1 = prompt_of(150, 80, 1);
    auto a  = f.run(p1, {70, 140});
    EXPECT_EQ(a.cached, 0);
    auto p2 = prompt_of(150, 80, 2);
    auto b  = f.run(p2, {70, 140});
    EXPECT_EQ(b.cached, 140);
    EXPECT_EQ(b.tokens, scratch(p2).tokens);
    // Identical prompt: the snapshot at the prompt's last token but one.
    auto c = f.run(p2, {70, 140});
    EXPECT_EQ(c.cached, 229);
    EXPECT_EQ(c.tokens, b.tokens);
    // A prompt sharing 100 tokens: the snapshot at 70.
    EXPECT_EQ(f.run(prompt_of(100, 80, 3), {70}).cached, 70);
    EXPECT_EQ(f.eng.shares, 0);  // never shared partially
    EXPECT_EQ(f.eng.bad_positions, 0);
    f.sched->stop();
}

// Snapshot points less than a quantum (64 tokens) past the restored prefix or the previous
// point are not taken: each would split the prefill into one more decode (and a state save)
// for less than a quantum of later reuse. The prompt's few new tokens are one chunk.
TEST(PrefixCache, SnapshotPointsCloserThanAQuantumDoNotSplitThePrefill) {
    fixture f(false);
    f.sched->start();
    auto p1 = prompt_of(150, 20, 1);
    EXPECT_EQ(f.run(p1, {30, 140, 160}).cached, 0);  // 30: too close to the start
    // A new question after the shared 140: restored there; 160 and 169 (the last token but
    // one) are 20 and 29 tokens past it, so the 30 new tokens are decoded in one call.
    const size_t calls = f.eng.calls.size();
    auto p2            = prompt_of(150, 20, 2);
    auto b             = f.run(p2, {30, 140, 160});
    EXPECT_EQ(b.cached, 140);
    EXPECT_EQ(b.tokens, scratch(p2).tokens);
    ASSERT_GT(f.eng.calls.size(), calls);
    EXPECT_EQ(f.eng.calls[calls].size(), 1u);
    EXPECT_EQ(f.eng.calls[calls][0].tokens.size(), 30u);
    // So the same prompt again restores 140, not 169 (nor 160).
    EXPECT_EQ(f.run(p2, {30, 140, 160}).cached, 140);
    // Nothing was kept at 30: a prompt sharing 40 tokens has no reusable prefix.
    EXPECT_EQ(f.run(prompt_of(40, 80, 3), {30}).cached, 0);
    f.sched->stop();
}

TEST(PrefixCache, ConcurrentRequestsWaitForTheSharedPrefillInsteadOfRepeatingIt) {
    for (bool partial : {true, false}) {
        SCOPED_TRACE(partial ? "kv streams" : "snapshots");
        fixture f(partial);
        std::vector<std::shared_ptr<sf::event_channel>> chans;
        for (int i = 0; i < 4; ++i) chans.push_back(submit(*f.sched, prompt_of(300, 8, i), {300}));
        f.sched->start();
        int32_t cached = 0;
        for (auto &c : chans) cached += drain(*c).cached;
        f.sched->stop();
        EXPECT_EQ(cached, 3 * 300);
        // The shared 300 tokens were prefilled once.
        EXPECT_EQ(decoded_tokens(f.eng), 300u + 4 * 8 + 4 * 3);
        EXPECT_EQ(f.eng.bad_positions, 0);
    }
}

TEST(PrefixCache, StaysWithinItsBudget) {
    const int64_t budget = 3000;  // bytes: about 187 tokens of the fake's 16 per token
    fixture f(true, budget);
    f.sched->start();
    for (int i = 0; i < 20; ++i) {
        std::vector<token_id> p(100);
        std::iota(p.begin(), p.end(), 10000 * (i + 1));  // 20 distinct prompts
        f.run(p);
        EXPECT_LE(f.cache->stats().ram_bytes, budget);
    }
    f.sched->stop();
    auto st = f.cache->stats();
    EXPECT_GT(st.evictions, 0u);
    EXPECT_GT(st.entries, 0);
}

// Cached prefixes are host copies or a free slot's memory, not cells other sequences need:
// when the engine has no room for a batch, the batch's sequences fail and the prefix they
// were given still serves the next request (nothing of it would make room).
TEST(PrefixCache, ADecodeWithNoRoomFailsItsSequencesAndKeepsTheCache) {
    fixture f(true);
    f.sched->start();
    auto a = f.run(prompt_of(40, 5, 1));
    ASSERT_EQ(a.tokens.size(), 4u);
    f.eng.capacity = 60;  // the next prompt's first 64-token chunk does not fit
    auto ch        = submit(*f.sched, prompt_of(100, 5, 2));
    session_event ev;
    while (ch->pop(ev, 5s) && ev.type != session_event::kind::FINISHED) {
    }
    EXPECT_EQ(ev.type, session_event::kind::FINISHED);
    EXPECT_EQ(ev.reason, sf::finish_reason::ERROR);
    f.eng.capacity = 0;
    // The entry is still there and still serves.
    auto b = f.run(prompt_of(40, 5, 3));
    EXPECT_EQ(b.cached, 40);
    EXPECT_EQ(b.tokens, scratch(prompt_of(40, 5, 3)).tokens);
    f.sched->stop();
    EXPECT_EQ(f.cache->stats().evictions, 0u);
}

TEST(PrefixCache, ZeroBudgetDisablesIt) {
    fixture f(true, 0);
    f.sched->start();
    f.run(prompt_of(100, 5, 1));
    auto b = f.run(prompt_of(100, 5, 2));
    EXPECT_EQ(b.cached, 0);
    f.sched->stop();
    EXPECT_EQ(f.cache->stats().entries, 0);
}

// A free slot keeps what its last sequence computed (as llama-server's slots do): the next
// request sharing a prefix with it is placed there and continues from it without a state copy.
TEST(PrefixCache, TheNextRequestContinuesInTheSlotThatHoldsItsPrefixWithoutACopy) {
    for (bool partial : {true, false}) {
        SCOPED_TRACE(partial ? "kv streams" : "snapshots");
        fixture f(partial);
        f.sched->start();
        auto p1 = prompt_of(200, 10, 1);
        auto a  = f.run(p1);
        // Attention memory is cut back to the shared 200 tokens; a recurrent state cannot be
        // cut, so there the next turn of the conversation (the whole state a prefix) continues.
        auto p2 = partial ? prompt_of(200, 10, 2) : p1;
        if (!partial) {
            p2.insert(p2.end(), a.tokens.begin(), a.tokens.end());
            p2.insert(p2.end(), {7, 8, 9});
        }
        auto b = f.run(p2);
        EXPECT_EQ(b.cached, partial ? 200 : static_cast<int32_t>(p1.size() + a.tokens.size() - 1));
        EXPECT_EQ(b.tokens, scratch(p2).tokens);
        EXPECT_EQ(f.eng.loads, 0);   // nothing loaded from a cache entry
        EXPECT_EQ(f.eng.shares, 0);  // nor copied from another sequence
        EXPECT_EQ(f.eng.bad_positions, 0);
        f.sched->stop();
        auto st = f.cache->stats();
        EXPECT_EQ(st.hits, 1u);
        EXPECT_EQ(st.cached_tokens, static_cast<uint64_t>(b.cached));
    }
}

// A slot's memory goes into the cache when an unrelated sequence needs the slot (the one freed
// longest ago first).
TEST(PrefixCache, AHeldMemoryIsKeptInTheCacheWhenAnUnrelatedSequenceTakesItsSlot) {
    fixture f(true);  // the fake engine has 4 slots
    f.sched->start();
    for (int i = 0; i < 4; ++i) f.run(prompt_of(0, 50, 10 + i));  // 4 unrelated prompts
    EXPECT_EQ(f.cache->stats().entries, 0);                       // all held in their slots
    // A prompt sharing 30 tokens with the first lands in that slot and takes them in place.
    auto sib = prompt_of(0, 50, 10);
    sib.resize(30);
    sib.insert(sib.end(), {1, 2, 3, 4});
    auto a = f.run(sib);
    EXPECT_EQ(a.cached, 30);
    EXPECT_EQ(f.eng.loads + f.eng.shares, 0);
    // A fifth unrelated prompt takes the slot freed longest ago: that memory becomes an entry.
    f.run(prompt_of(0, 50, 99));
    EXPECT_EQ(f.cache->stats().entries, 1);
    // The prompt whose slot was taken is served from that entry.
    auto again = f.run(prompt_of(0, 50, 11));
    EXPECT_EQ(again.cached, 49);
    EXPECT_EQ(again.tokens, scratch(prompt_of(0, 50, 11)).tokens);
    EXPECT_EQ(f.eng.loads, 1);
    EXPECT_EQ(f.eng.bad_positions, 0);
    f.sched->stop();
}

// A recurrent state cannot be cut back, so its slot's memory is saved whole when another
// sequence takes the slot; when the cache already holds all of it but less than a quantum
// (64 tokens: a question and answer after a shared system prompt), it is let go instead: that
// save sat on the newcomer's path to its first token, for so few tokens of reuse.
TEST(PrefixCache, AHybridHeldMemoryIsSavedOnlyWhenTheCacheLacksMoreThanItsTail) {
    fixture f(false);  // the fake engine has 4 slots
    f.sched->start();
    // A shared 100-token system prompt (a snapshot point), then 10 distinct tokens: 4 slots.
    for (int i = 0; i < 4; ++i) f.run(prompt_of(100, 10, i), {100});
    EXPECT_EQ(f.cache->stats().entries, 1);  // the snapshot at 100
    // A fifth takes the slot freed longest ago: its memory (110 + 3 answer tokens) is 13
    // tokens past the entry, so no save.
    auto e = f.run(prompt_of(100, 10, 4), {100});
    EXPECT_EQ(e.cached, 100);
    EXPECT_EQ(f.cache->stats().entries, 1);
    // Four long unrelated conversations (300 tokens, nothing cached) fill the slots; the next
    // takes the oldest and that one's memory becomes an entry, which serves it again.
    for (int i = 0; i < 4; ++i) f.run(prompt_of(0, 300, 20 + i));
    const auto entries = f.cache->stats().entries;
    f.run(prompt_of(0, 300, 30));
    EXPECT_EQ(f.cache->stats().entries, entries + 1);
    auto again = f.run(prompt_of(0, 300, 21));
    EXPECT_EQ(again.cached, 299);
    EXPECT_EQ(again.tokens, scratch(prompt_of(0, 300, 21)).tokens);
    EXPECT_EQ(f.eng.bad_positions, 0);
    f.sched->stop();
}

// A sequence placed in a held slot that then finds a longer prefix elsewhere (a live sequence)
// lets the held memory go and copies the longer one; its sampler, set up when it was placed,
// stays (the tick thread, driven step by step).
TEST(PrefixCache, ASequenceThatFindsALongerPrefixElsewhereKeepsItsSampler) {
    fixture f(true);
    auto with = [](int shared, int salt, int max_tokens, sf::scheduler &s) {
        auto ch = std::make_shared<sf::event_channel>();
        sf::sequence_request r;
        r.session_id          = "s" + std::to_string(salt);
        r.prompt              = prompt_of(shared, 5, salt);
        r.sampling.max_tokens = max_tokens;
        r.channel             = ch;
        s.submit(std::move(r));
        return ch;
    };
    auto finished = [](sf::event_channel &ch, run_result &r) {
        session_event ev;
        while (ch.pop(ev, 0ms)) {
            if (ev.type == session_event::kind::FINISHED) {
                r.cached = ev.cached_tokens;
                return true;
            }
            r.tokens.push_back(ev.token);
        }
        return false;
    };
    auto a = with(30, 1, 4, *f.sched);     // slot 0: shares 30 with the others
    auto x = with(100, 2, 400, *f.sched);  // slot 1: long, still generating below
    run_result ra, rx, rb;
    for (int i = 0; i < 1000 && !finished(*a, ra); ++i) f.sched->step();
    auto b = with(100, 3, 4, *f.sched);  // held slot 0 gives 30, live slot 1 gives 100
    for (int i = 0; i < 1000 && !finished(*b, rb); ++i) f.sched->step();
    EXPECT_EQ(rb.cached, 100);
    EXPECT_EQ(rb.tokens, scratch(prompt_of(100, 5, 3)).tokens);
    EXPECT_EQ(f.eng.no_sampler, 0);
    EXPECT_EQ(f.eng.bad_positions, 0);
    EXPECT_FALSE(finished(*x, rx));  // the long one was live throughout
    f.sched->stop();
}

// Two conversations on one system prompt: the second one's first turn does not cut the first
// one's long history out of its slot (it copies the shared part into an empty slot), so the
// first conversation's next turn still continues in place.
TEST(PrefixCache, AnotherConversationCopiesTheSharedPartAndLeavesALongHistoryInPlace) {
    fixture f(true);
    f.sched->start();
    auto x1 = prompt_of(50, 300, 1);  // system prompt + a long first conversation
    auto a  = f.run(x1);
    auto y  = f.run(prompt_of(50, 5, 2));
    EXPECT_EQ(y.cached, 50);
    EXPECT_EQ(f.eng.shares, 1);  // copied from the held memory, not cut in place
    auto x2 = x1;
    x2.insert(x2.end(), a.tokens.begin(), a.tokens.end());
    x2.insert(x2.end(), {7, 8, 9});
    auto b = f.run(x2);
    EXPECT_EQ(b.cached, static_cast<int32_t>(x1.size() + a.tokens.size() - 1));
    EXPECT_EQ(b.tokens, scratch(x2).tokens);
    EXPECT_EQ(f.eng.loads, 0);
    EXPECT_EQ(f.eng.shares, 1);
    EXPECT_EQ(f.eng.bad_positions, 0);
    f.sched->stop();
}

// Issue #38: a sequence reuses no prefix computed in another cache scope, whether it sits in a
// slot's held memory, a cache entry or (attention) a live sequence; within a scope it does.
TEST(PrefixCache, CacheScopesShareOnlyWithinThemselves) {
    for (const bool partial : {true, false}) {
        SCOPED_TRACE(partial ? "shared KV prefixes" : "snapshots");
        fixture f(partial);
        f.sched->start();
        const std::vector<int32_t> b = {200};  // the snapshot point (message end)
        const uint64_t alice         = sf::cache::cache_scope_id("00000000000000a1");
        const uint64_t bob           = sf::cache::cache_scope_id("00000000000000b2");
        EXPECT_EQ(f.run(prompt_of(200, 10, 1), b, alice).cached, 0);
        // Bob's identical system prompt: nothing of Alice's, in place or from the cache.
        EXPECT_EQ(f.run(prompt_of(200, 10, 2), b, bob).cached, 0);
        EXPECT_EQ(f.run(prompt_of(200, 10, 3), b, 0).cached, 0);
        // Each scope then finds its own.
        EXPECT_EQ(f.run(prompt_of(200, 10, 4), b, alice).cached, 200);
        EXPECT_EQ(f.run(prompt_of(200, 10, 5), b, bob).cached, 200);
        EXPECT_EQ(f.run(prompt_of(200, 10, 6), b, 0).cached, 200);
        EXPECT_EQ(f.eng.bad_positions, 0);
        f.sched->stop();
    }
}

TEST(PrefixCache, ScopeIds) {
    EXPECT_EQ(sf::cache::cache_scope_id(""), 0u);
    EXPECT_EQ(sf::cache::cache_scope_id("00000000000000ff"), 0xffu);
    EXPECT_EQ(sf::cache::cache_scope_id("0000000000000000"), 1u);  // never the shared scope
    EXPECT_NE(sf::cache::cache_scope_id("not hex"), 0u);
    EXPECT_NE(sf::cache::cache_scope_id("not hex"), sf::cache::cache_scope_id("not hex!"));
}
