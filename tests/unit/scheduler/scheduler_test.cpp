#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <thread>

#include "fake_engine.h"

using namespace std::chrono_literals;
using sf::session_event;

namespace {

std::shared_ptr<sf::event_channel> submit(sf::scheduler &s, const std::string &id, int prompt_len,
                                          int max_tokens, std::vector<std::string> stops = {}) {
    auto ch = std::make_shared<sf::event_channel>();
    sf::sequence_request r;
    r.session_id = id;
    r.prompt.assign(prompt_len, 10);
    r.sampling.max_tokens = max_tokens;
    r.stops               = std::move(stops);
    r.channel             = ch;
    s.submit(std::move(r));
    return ch;
}

std::vector<session_event> drain(sf::event_channel &ch) {
    std::vector<session_event> out;
    session_event ev;
    while (ch.pop(ev, 5s)) {
        out.push_back(ev);
        if (ev.type == session_event::kind::FINISHED) break;
    }
    return out;
}

}  // namespace

TEST(Scheduler, GeneratesUntilMaxTokensWithContiguousIndices) {
    sf::test::fake_engine eng;
    sf::scheduler s(eng, {64, 64});
    auto ch = submit(s, "a", 100, 5);
    s.start();
    auto evs = drain(*ch);
    s.stop();
    ASSERT_EQ(evs.size(), 6u);
    for (uint32_t i = 0; i < 5; ++i) {
        EXPECT_EQ(evs[i].index, i);
        EXPECT_EQ(evs[i].token, 11 + static_cast<int>(i));  // fake engine: last token + 1
    }
    EXPECT_EQ(evs[5].reason, sf::finish_reason::LENGTH);
    EXPECT_EQ(evs[5].completion_tokens, 5);
    EXPECT_EQ(evs[5].prompt_tokens, 100);
    // 100-token prompt over a 64-token budget: chunked into two ticks before the first sample.
    EXPECT_EQ(eng.calls.at(0).at(0).tokens.size(), 64u);
    EXPECT_EQ(eng.calls.at(1).at(0).tokens.size(), 36u);
    EXPECT_EQ(eng.ended, std::vector<int>{0});
}

TEST(Scheduler, SessionsArrivingTogetherShareTicks) {
    sf::test::fake_engine eng;
    sf::scheduler s(eng, {64, 64});
    std::vector<std::shared_ptr<sf::event_channel>> chans;
    for (int i = 0; i < 3; ++i) chans.push_back(submit(s, "s" + std::to_string(i), 4, 6));
    s.start();
    for (auto &c : chans) ASSERT_EQ(drain(*c).back().reason, sf::finish_reason::LENGTH);
    s.stop();
    auto st = s.stats();
    EXPECT_EQ(st.max_sequences_per_tick, 3);
    EXPECT_GT(st.batched_ticks, 0u);
    EXPECT_EQ(st.generated_tokens, 18u);
}

TEST(Scheduler, StopStringEndsTheSessionAndIsNotReleased) {
    sf::test::fake_engine eng;
    eng.pieces = {{11, "he"}, {12, "llo EN"}, {13, "D rest"}};
    sf::scheduler s(eng, {64, 64});
    auto ch = submit(s, "a", 3, 50, {"END"});
    s.start();
    auto evs = drain(*ch);
    s.stop();
    std::string text;
    for (auto &e : evs) text += e.text;
    EXPECT_EQ(text, "hello ");
    EXPECT_EQ(evs.back().reason, sf::finish_reason::STOP);
    EXPECT_EQ(evs.back().stop_string, "END");
}

TEST(Scheduler, CancelledSessionFreesItsSlotForTheNextOne) {
    sf::test::fake_engine eng;
    eng.seqs = 1;
    sf::scheduler s(eng, {64, 64});
    auto first  = submit(s, "long", 4, 1000000);
    auto second = submit(s, "next", 4, 3);
    s.start();
    session_event ev;
    ASSERT_TRUE(first->pop(ev, 5s));  // first is generating
    first->cancel();
    auto evs = drain(*second);
    s.stop();
    ASSERT_FALSE(evs.empty());
    EXPECT_EQ(evs.back().reason, sf::finish_reason::LENGTH);
    EXPECT_EQ(evs.back().completion_tokens, 3);
}

TEST(Scheduler, ResumedSessionContinuesAtItsIndex) {
    sf::test::fake_engine eng;
    sf::scheduler s(eng, {64, 64});
    auto ch = std::make_shared<sf::event_channel>();
    sf::sequence_request r;
    r.session_id = "r";
    r.prompt.assign(4, 10);
    r.resume_tokens       = {11, 12};
    r.sampling.max_tokens = 4;
    r.channel             = ch;
    s.submit(std::move(r));
    s.start();
    auto evs = drain(*ch);
    s.stop();
    ASSERT_EQ(evs.size(), 3u);
    EXPECT_EQ(evs[0].index, 2u);
    EXPECT_EQ(evs[0].token, 13);  // follows the last resumed token
    EXPECT_EQ(evs[1].index, 3u);
    EXPECT_EQ(evs[2].completion_tokens, 4);
}
