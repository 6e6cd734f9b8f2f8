// Speculative decoding in the scheduler (issue #21): verification keeps the events of every
// session exactly as without drafts — tokens, indices, text, finish reason and counts — when a
// draft is accepted whole, cut short, or runs past an end of generation, a stop string or
// max_tokens; the memory never holds a rejected draft token (the next item's position follows
// the memory) nor, when a sequence ends, a verified one past its last delivered token; an
// interactive sequence's tick carries no draft of another class.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_engine.h"
#include "scheduler/scheduler.h"

using namespace std::chrono_literals;
using sf::session_event;

namespace {

// A fake "model" whose next token follows the last token in memory: 1000, 1001, … 1004, 1000,
// … (so n-gram-like drafts are right), 0 (end of generation) at index eog_at. Drafts propose
// that cycle, with their third token wrong every other time.
class spec_engine : public sf::test::fake_engine {
  public:
    int32_t spec_draft_max() const override { return dmax; }
    void draft(int, std::span<const sf::token_id> tokens, int32_t n_max,
               std::vector<sf::token_id> &out) override {
        out.clear();
        sf::token_id t = tokens.back();
        for (int32_t i = 0; i < n_max; ++i) out.push_back(t = next(t));
        if (all_wrong && !out.empty()) out[0] = 7;
        if (++drafts % 2 == 0 && out.size() > 2) out[2] = 7;
    }
    sf::token_id sample(int seq, int item, uint32_t index) override {
        return sample_at(seq, item, last.at(item).n_logits - 1, index);
    }
    sf::token_id sample_at(int seq, int item, int32_t offset, uint32_t index) override {
        const auto &m        = mem.at(seq);
        const size_t upto    = m.size() - (last.at(item).n_logits - 1 - offset);
        const sf::token_id t = m.at(upto - 1);
        if (static_cast<int32_t>(index) == eog_at) return 0;
        return next(t);
    }
    // What a finished sequence's memory held (the prefix cache would keep it): no draft cells.
    void seq_end(int seq) override {
        ended_mem.push_back(mem[seq]);
        fake_engine::seq_end(seq);
    }
    static sf::token_id next(sf::token_id t) { return t < 1000 ? 1000 : 1000 + (t - 999) % 5; }

    int32_t dmax   = 0;
    int32_t eog_at = -1;
    bool all_wrong = false;  // every draft's first token is wrong: nothing is ever kept
    int drafts     = 0;
    std::vector<std::vector<sf::token_id>> ended_mem;
};

struct run_result {
    std::vector<std::vector<session_event>> events;  // by session
    sf::scheduler_stats stats;
    int bad_positions = 0;
    std::vector<std::vector<sf::batch_item>> calls;
    std::vector<std::vector<sf::token_id>> ended_mem;
};

struct req {
    int max_tokens;
    std::vector<std::string> stops;
    sf::priority_class cls = sf::priority_class::NORMAL;
    bool speculative       = true;
};

run_result run(int32_t dmax, int32_t eog_at, const std::vector<req> &reqs, bool all_wrong = false) {
    spec_engine eng;
    eng.dmax      = dmax;
    eng.eog_at    = eog_at;
    eng.all_wrong = all_wrong;
    sf::scheduler_options o;
    o.planner = {64, 64};
    sf::scheduler s(eng, o);
    std::vector<std::shared_ptr<sf::event_channel>> chans;
    for (size_t i = 0; i < reqs.size(); ++i) {
        auto ch = std::make_shared<sf::event_channel>();
        sf::sequence_request r;
        r.session_id = "s" + std::to_string(i);
        r.cls        = reqs[i].cls;
        r.prompt.assign(10 + i, 10);
        r.sampling.max_tokens  = reqs[i].max_tokens;
        r.stops                = reqs[i].stops;
        r.sampling.speculative = reqs[i].speculative;
        r.channel              = ch;
        s.submit(std::move(r));
        chans.push_back(ch);
    }
    while (s.step()) {
    }
    run_result out;
    for (auto &ch : chans) {
        std::vector<session_event> evs;
        session_event ev;
        while (ch->pop(ev, 0ms)) evs.push_back(ev);
        out.events.push_back(std::move(evs));
    }
    out.stats         = s.stats();
    out.bad_positions = eng.bad_positions;
    out.calls         = eng.calls;
    out.ended_mem     = eng.ended_mem;
    return out;
}

void expect_same(const run_result &got, const run_result &want) {
    ASSERT_EQ(got.events.size(), want.events.size());
    for (size_t i = 0; i < want.events.size(); ++i) {
        const auto &g = got.events[i], &w = want.events[i];
        ASSERT_EQ(g.size(), w.size()) << "session " << i;
        for (size_t k = 0; k < w.size(); ++k) {
            EXPECT_EQ(g[k].type, w[k].type) << i << ":" << k;
            EXPECT_EQ(g[k].index, w[k].index) << i << ":" << k;
            EXPECT_EQ(g[k].token, w[k].token) << i << ":" << k;
            EXPECT_EQ(g[k].text, w[k].text) << i << ":" << k;
            EXPECT_EQ(g[k].reason, w[k].reason) << i << ":" << k;
            EXPECT_EQ(g[k].completion_tokens, w[k].completion_tokens) << i << ":" << k;
        }
        ASSERT_FALSE(w.empty());
        EXPECT_EQ(w.back().type, session_event::kind::FINISHED);
    }
    EXPECT_EQ(got.bad_positions, 0);
    // Sessions may end in another order (drafts make some faster); each prompt is unique.
    auto g = got.ended_mem, w = want.ended_mem;
    std::sort(g.begin(), g.end());
    std::sort(w.begin(), w.end());
    EXPECT_EQ(g, w);
}

TEST(SchedulerSpeculation, StreamsEqualThoseWithoutDraftsAtLengthStopAndEndOfGeneration) {
    const std::vector<req> reqs = {
        {13, {}},              // LENGTH inside a draft's reach
        {40, {"1003><1004"}},  // a stop string across two tokens of an accepted draft
        {3, {}},               // shorter than one draft
        {25, {}},
    };
    for (int32_t eog_at : {-1, 7}) {
        const auto plain = run(0, eog_at, reqs);
        const auto spec  = run(4, eog_at, reqs);
        expect_same(spec, plain);
        EXPECT_EQ(plain.stats.spec_drafted, 0u);
        EXPECT_GT(spec.stats.spec_drafted, 0u);
        EXPECT_GT(spec.stats.spec_accepted, 0u);
        EXPECT_LT(spec.stats.spec_accepted, spec.stats.spec_drafted);  // some were wrong
        EXPECT_LT(spec.calls.size(), plain.calls.size()) << "accepted drafts save ticks";
    }
}

TEST(SchedulerSpeculation, NoDraftsOfOtherClassesInATickWithAnInteractiveSequence) {
    const std::vector<req> reqs = {{30, {}, sf::priority_class::INTERACTIVE},
                                   {30, {}, sf::priority_class::BATCH},
                                   {30, {}, sf::priority_class::BATCH}};
    const auto spec             = run(4, -1, reqs);
    expect_same(spec, run(0, -1, reqs));
    int interactive_ticks = 0;
    for (const auto &call : spec.calls) {
        bool interactive = false;
        for (const auto &it : call) interactive |= it.seq == 0;  // admitted first: slot 0
        if (!interactive) continue;
        ++interactive_ticks;
        for (const auto &it : call)
            if (it.seq != 0) EXPECT_EQ(it.n_logits, 1) << "a batch draft beside the interactive";
    }
    EXPECT_GT(interactive_ticks, 0);
}

TEST(SchedulerSpeculation, ARequestThatOptsOutGetsNoDrafts) {
    const std::vector<req> reqs = {{20, {}, sf::priority_class::NORMAL, false},
                                   {20, {}, sf::priority_class::NORMAL, true}};
    const auto spec             = run(4, -1, reqs);
    expect_same(spec, run(0, -1, reqs));
    bool drafted_other = false;
    for (const auto &call : spec.calls) {
        for (const auto &it : call) {
            if (it.seq == 0) EXPECT_EQ(it.n_logits, 1) << "a draft for the opted-out request";
            drafted_other |= it.seq == 1 && it.n_logits > 1;
        }
    }
    EXPECT_TRUE(drafted_other);
}

}  // namespace

namespace {

// A sequence whose drafts are never kept drafts less and less often (one token, after 1, 3, 7,
// 15 ticks without), so it does not pay a verification row and a draft pass every tick.
TEST(SchedulerSpeculation, ASequenceWhoseDraftsAreNeverKeptDraftsRarely) {
    const std::vector<req> reqs = {{100, {}}};
    const auto spec             = run(4, -1, reqs, /*all_wrong=*/true);
    expect_same(spec, run(0, -1, reqs));
    EXPECT_EQ(spec.stats.spec_accepted, 0u);
    int drafting_ticks = 0;
    for (const auto &call : spec.calls)
        for (const auto &it : call) drafting_ticks += it.n_logits > 1;
    // Drafts at generated tokens 1, 2, 4, 8, 16, then every 16th: 10 in 100 ticks.
    EXPECT_GE(drafting_ticks, 5);
    EXPECT_LE(drafting_ticks, 12);
    EXPECT_LE(spec.stats.spec_drafted, 4u + 11u) << "the first draft is full, then one token";
}

// A sequence whose drafts are kept drafts the engine's maximum again after a partial miss.
TEST(SchedulerSpeculation, DraftsThatAreKeptGrowBackToTheMaximum) {
    const std::vector<req> reqs = {{60, {}}};
    const auto spec             = run(4, -1, reqs);
    expect_same(spec, run(0, -1, reqs));
    std::vector<int32_t> lens;  // draft length of each drafting tick
    for (const auto &call : spec.calls)
        for (const auto &it : call)
            if (it.n_logits > 1) lens.push_back(it.n_logits - 1);
    ASSERT_GE(lens.size(), 4u);
    EXPECT_EQ(lens[0], 4);
    // Every other draft has its third token wrong: 2 kept, so the next asks 3; that one is
    // right whole, so the one after asks the maximum again.
    EXPECT_EQ(lens[1], 4);
    EXPECT_EQ(lens[2], 3);
    EXPECT_EQ(lens[3], 4);
}

}  // namespace
