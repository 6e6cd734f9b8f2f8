// Speculative decoding (issue #21): the n-gram drafter (pure), and verification on a real tiny
// model: a sequence decoded with drafts behind its tokens samples exactly the tokens it samples
// one token per decode, greedy and seeded, whether the drafts are right, wrong or partly right.
#include "engine/llama/speculation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "engine/llama/draft_model.h"
#include "engine/llama/llama_engine.h"
#include "tiny_engine.h"

namespace {

using toks = std::vector<sf::token_id>;

toks draft_of(const toks &t, int32_t n_max, sf::spec_options o = {}) {
    toks out = {99};  // cleared by ngram_draft
    sf::ngram_draft(t, o, n_max, out);
    return out;
}

TEST(NgramDraft, ContinuesTheMostRecentEarlierOccurrenceOfTheLongestSuffix) {
    // Suffix [1 2 3] occurs at 0 (followed by 7 8) and [2 3] also at 5 (followed by 9):
    // the longer match wins although the shorter one is more recent.
    EXPECT_EQ(draft_of({1, 2, 3, 7, 8, 2, 3, 9, 4, 1, 2, 3}, 8), (toks{7, 8, 2, 3, 9, 4, 1, 2}));
    // Only [2 3] recurs: its most recent earlier occurrence.
    EXPECT_EQ(draft_of({2, 3, 5, 2, 3, 6, 4, 2, 3}, 8), (toks{6, 4, 2, 3}));
    // n_max bounds the draft.
    EXPECT_EQ(draft_of({2, 3, 5, 2, 3, 6, 4, 2, 3}, 2), (toks{6, 4}));
}

TEST(NgramDraft, NoDraftWithoutARecurringSuffixOrRoom) {
    EXPECT_EQ(draft_of({1, 2, 3, 4, 5}, 8), toks{});
    EXPECT_EQ(draft_of({}, 8), toks{});
    EXPECT_EQ(draft_of({4}, 8), toks{});
    EXPECT_EQ(draft_of({1, 2, 1, 2}, 0), toks{});
    // A single recurring token is below ngram_min (2) unless asked for.
    EXPECT_EQ(draft_of({5, 6, 7, 5}, 8), toks{});
    sf::spec_options one;
    one.ngram_min = 1;
    EXPECT_EQ(draft_of({5, 6, 7, 5}, 8, one), (toks{6, 7, 5}));
}

TEST(NgramDraft, ParsesTypeNames) {
    sf::spec_type t = sf::spec_type::NGRAM;
    EXPECT_TRUE(sf::parse_spec_type("none", t));
    EXPECT_EQ(t, sf::spec_type::NONE);
    EXPECT_TRUE(sf::parse_spec_type("ngram", t));
    EXPECT_EQ(t, sf::spec_type::NGRAM);
    EXPECT_STREQ(sf::spec_type_name(t), "ngram");
    EXPECT_TRUE(sf::parse_spec_type("draft", t));
    EXPECT_EQ(t, sf::spec_type::DRAFT);
    EXPECT_STREQ(sf::spec_type_name(t), "draft");
    EXPECT_TRUE(sf::parse_spec_type("mtp", t));
    EXPECT_EQ(t, sf::spec_type::MTP);
    EXPECT_STREQ(sf::spec_type_name(t), "mtp");
    EXPECT_FALSE(sf::parse_spec_type("medusa", t));
}

class SpeculationEngineTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        std::string err;
        auto o = sf::test::tiny_engine_options("spec-test", 7, dir_, err);
        ASSERT_EQ(err, "");
        o.spec.type      = sf::spec_type::NGRAM;
        o.spec.draft_max = 8;
        engine_          = new sf::llama_engine(o);
        // The same model as a draft model (--model-draft): greedy drafts are its own tokens.
        o.spec.type        = sf::spec_type::DRAFT;
        o.spec.draft_model = o.model_path;
        drafting_          = new sf::llama_engine(o);
    }
    static void TearDownTestSuite() {
        delete drafting_;
        delete engine_;
        std::filesystem::remove_all(dir_);
    }

    // `n` tokens of `seq` after `prompt`, one token per decode.
    static toks plain(int seq, const sf::sampling_params &p, const toks &prompt, int n) {
        auto &e = *engine_;
        EXPECT_TRUE(e.seq_start(seq, p, prompt));
        EXPECT_EQ(e.decode({{seq, prompt, 0, true}}), 0);
        toks out = {e.sample(seq, 0, 0)};
        auto pos = static_cast<int32_t>(prompt.size());
        while (static_cast<int>(out.size()) < n) {
            EXPECT_EQ(e.decode({{seq, {out.back()}, pos++, true}}), 0);
            out.push_back(e.sample(seq, 0, static_cast<uint32_t>(out.size())));
        }
        e.seq_end(seq);
        return out;
    }

    // The same with a draft behind each token: guess(out) proposes it; verification as the
    // scheduler does it (scheduler.cpp verify). Counts accepted drafts into `accepted`.
    template <class Guess>
    static toks drafted(int seq, const sf::sampling_params &p, const toks &prompt, int n,
                        Guess guess, int &accepted) {
        auto &e = *engine_;
        EXPECT_TRUE(e.seq_start(seq, p, prompt));
        EXPECT_EQ(e.decode({{seq, prompt, 0, true}}), 0);
        toks out = {e.sample(seq, 0, 0)};
        auto pos = static_cast<int32_t>(prompt.size());  // of out.back()
        while (static_cast<int>(out.size()) < n) {
            toks d = guess(out);
            d.resize(std::min<size_t>(d.size(), n - out.size() - 1));
            sf::batch_item it{seq, {out.back()}, pos, true};
            it.tokens.insert(it.tokens.end(), d.begin(), d.end());
            it.n_logits = static_cast<int32_t>(1 + d.size());
            EXPECT_EQ(e.decode({it}), 0);
            int32_t j = 0;
            for (;; ++j) {
                const auto t = e.sample_at(seq, 0, j, static_cast<uint32_t>(out.size()));
                out.push_back(t);
                if (j == static_cast<int32_t>(d.size()) || t != d[j]) break;
            }
            accepted += j;
            pos += 1 + j;
            EXPECT_TRUE(e.seq_trim(seq, pos));
        }
        e.seq_end(seq);
        return out;
    }

    static inline sf::llama_engine *engine_   = nullptr;
    static inline sf::llama_engine *drafting_ = nullptr;  // --model-draft: the same model
    static inline std::filesystem::path dir_;
};

TEST_F(SpeculationEngineTest, VerifiedDraftsKeepGreedyAndSeededStreamsIdentical) {
    const toks prompt = engine_->tokenize("one two three four one two three four one two", false);
    ASSERT_EQ(engine_->spec_draft_max(), 8);
    for (float temp : {0.0f, 0.8f}) {
        sf::sampling_params p;
        p.temperature  = temp;
        p.seed         = 4242;
        const toks ref = plain(0, p, prompt, 40);
        // A perfect draft (the reference's next tokens), a wrong one, a half-right one, and the
        // n-gram drafter's own guesses.
        int acc_right = 0, acc_wrong = 0, acc_half = 0, acc_ngram = 0;
        auto right = [&](const toks &o) {
            return toks(ref.begin() + o.size(), ref.begin() + std::min(o.size() + 8, ref.size()));
        };
        auto wrong = [&](const toks &o) { return toks(3, (o.back() + 1) % 1000); };
        auto half  = [&](const toks &o) {
            toks d = right(o);
            if (d.size() > 2) d[2] ^= 1;
            return d;
        };
        auto ngram = [&](const toks &o) {
            toks all = prompt;
            all.insert(all.end(), o.begin(), o.end());
            toks d;
            engine_->draft(1, all, 8, d);
            return d;
        };
        EXPECT_EQ(drafted(1, p, prompt, 40, right, acc_right), ref) << "temperature " << temp;
        EXPECT_EQ(drafted(0, p, prompt, 40, wrong, acc_wrong), ref) << "temperature " << temp;
        EXPECT_EQ(drafted(1, p, prompt, 40, half, acc_half), ref) << "temperature " << temp;
        EXPECT_EQ(drafted(0, p, prompt, 40, ngram, acc_ngram), ref) << "temperature " << temp;
        EXPECT_GT(acc_right, 30) << "a perfect draft is accepted";
        EXPECT_GT(acc_half, 0);
    }
}

// A draft model drafts for several sequences in one call, each in its own lane: the target as
// its own draft proposes exactly the greedy continuation, a lane follows its sequence from one
// call to the next (only new tokens decoded), and a sequence beyond the lanes gets no draft.
TEST_F(SpeculationEngineTest, ADraftModelProposesTheGreedyContinuationOfEachSequence) {
    const toks a = engine_->tokenize("one two three four one two", false);
    const toks b = engine_->tokenize("the river runs to the sea", false);
    sf::sampling_params greedy;
    greedy.temperature = 0;
    const toks ref_a   = plain(0, greedy, a, 12);
    const toks ref_b   = plain(1, greedy, b, 12);

    std::vector<sf::draft_request> reqs(3);
    reqs[0] = {0, a, 6, {}};
    reqs[1] = {1, b, 6, {}};
    reqs[2] = {2, a, 6, {}};  // two lanes (two sequences): the third goes without
    drafting_->draft_many(reqs);
    EXPECT_EQ(reqs[0].out, toks(ref_a.begin(), ref_a.begin() + 6));
    EXPECT_EQ(reqs[1].out, toks(ref_b.begin(), ref_b.begin() + 6));
    EXPECT_TRUE(reqs[2].out.empty());

    // The next call: each sequence grew by its reference's next tokens; n_max bounds a draft.
    toks a2 = a, b2 = b;
    a2.insert(a2.end(), ref_a.begin(), ref_a.begin() + 3);
    b2.insert(b2.end(), ref_b.begin(), ref_b.begin() + 1);
    std::vector<sf::draft_request> next = {{0, a2, 4, {}}, {1, b2, 2, {}}};
    drafting_->draft_many(next);
    EXPECT_EQ(next[0].out, toks(ref_a.begin() + 3, ref_a.begin() + 7));
    EXPECT_EQ(next[1].out, toks(ref_b.begin() + 1, ref_b.begin() + 3));
}

TEST_F(SpeculationEngineTest, DraftModelDraftsKeepGreedyAndSeededStreamsIdentical) {
    const toks prompt = engine_->tokenize("one two three four one two three four one two", false);
    for (float temp : {0.0f, 0.8f}) {
        sf::sampling_params p;
        p.temperature  = temp;
        p.seed         = 4242;
        const toks ref = plain(0, p, prompt, 40);
        int accepted   = 0;
        auto guess     = [&](const toks &o) {
            toks all = prompt;
            all.insert(all.end(), o.begin(), o.end());
            toks d;
            drafting_->draft(1, all, 8, d);
            return d;
        };
        EXPECT_EQ(drafted(0, p, prompt, 40, guess, accepted), ref) << "temperature " << temp;
        if (temp == 0.0f) EXPECT_GT(accepted, 30) << "the target's own greedy drafts are kept";
    }
}

TEST(DraftModel, AnotherTokenizerIsRefusedNamingTheFirstDifference) {
    std::filesystem::path dir;
    std::string err;
    auto o = sf::test::tiny_engine_options("spec-vocab", 7, dir, err);
    ASSERT_EQ(err, "");
    const std::string other = (dir / "qwen25.gguf").string();
    sf::mkmodel::options mo{"tiny", "qwen3", 7};
    mo.tokenizer = "qwen2.5";
    ASSERT_EQ(sf::mkmodel::write_model(mo, other), "");
    o.spec.type        = sf::spec_type::DRAFT;
    o.spec.draft_model = other;
    try {
        sf::llama_engine e(o);
        ADD_FAILURE() << "a draft model with another tokenizer was accepted";
    } catch (const std::runtime_error &ex) {
        EXPECT_NE(std::string(ex.what()).find("must have the model's tokenizer, and token 151665"),
                  std::string::npos)
            << ex.what();
    }
    o.spec.draft_model.clear();
    EXPECT_THROW(sf::llama_engine{o}, std::runtime_error) << "draft without a draft model";
    std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

// --spec-type mtp on mkmodel's glm4moe (a NextN block after the trunk, written to repeat the
// trunk's own prediction): drafts come after the sequence's decodes fed the block, verification
// keeps the stream of one token per decode, and a sequence whose memory was replaced (parked
// and resumed) drafts again only after its next decode.
TEST(MtpDrafter, DraftsFollowTheSequenceAndStartOverWhenItsMemoryIsReplaced) {
    std::filesystem::path dir;
    std::string err;
    auto o = sf::test::tiny_engine_options("spec-mtp", 7, dir, err);
    ASSERT_EQ(err, "");
    o.model_path = (dir / "glm.gguf").string();
    ASSERT_EQ(sf::mkmodel::write_model({"tiny", "glm4moe", 7}, o.model_path), "");
    o.spec.type      = sf::spec_type::MTP;
    o.spec.draft_max = 4;
    sf::llama_engine e(o);
    ASSERT_EQ(e.spec_draft_max(), 4);
    const toks prompt = e.tokenize("one two three four one two three four", false);
    sf::sampling_params greedy;
    greedy.temperature = 0;

    // The reference: one token per decode.
    ASSERT_TRUE(e.seq_start(0, greedy, prompt));
    ASSERT_EQ(e.decode({{0, prompt, 0, true}}), 0);
    toks ref = {e.sample(0, 0, 0)};
    for (auto pos = static_cast<int32_t>(prompt.size()); ref.size() < 24; ++pos) {
        ASSERT_EQ(e.decode({{0, {ref.back()}, pos, true}}), 0);
        ref.push_back(e.sample(0, 0, static_cast<uint32_t>(ref.size())));
    }
    e.seq_end(0);

    // With the block's drafts behind each token, verified as the scheduler does.
    ASSERT_TRUE(e.seq_start(1, greedy, prompt));
    ASSERT_EQ(e.decode({{1, prompt, 0, true}}), 0);
    toks all = prompt, out = {e.sample(1, 0, 0)};
    all.push_back(out.back());
    int drafted = 0, accepted = 0;
    bool resumed = false;
    while (out.size() < ref.size()) {
        std::vector<sf::draft_request> r = {{1, all, 4, {}}};
        r[0].n_max = static_cast<int32_t>(std::min<size_t>(4, ref.size() - out.size() - 1));
        e.draft_many(r);
        if (r[0].n_max > 0) EXPECT_FALSE(r[0].out.empty()) << "a draft after " << out.size();
        const auto pos = static_cast<int32_t>(all.size()) - 1;
        sf::batch_item it{1, {all.back()}, pos, true};
        it.tokens.insert(it.tokens.end(), r[0].out.begin(), r[0].out.end());
        it.n_logits = static_cast<int32_t>(it.tokens.size());
        ASSERT_EQ(e.decode({it}), 0);
        drafted += static_cast<int>(r[0].out.size());
        for (int32_t j = 0;; ++j) {
            out.push_back(e.sample_at(1, 0, j, static_cast<uint32_t>(out.size())));
            all.push_back(out.back());
            if (j == static_cast<int32_t>(r[0].out.size()) || out.back() != r[0].out[j]) break;
            ++accepted;
        }
        ASSERT_TRUE(e.seq_trim(1, static_cast<int32_t>(all.size()) - 1));
        if (!resumed && out.size() >= 8 && out.size() + 6 < ref.size()) {
            // Park and resume: the block's stream starts over, so no draft until a decode.
            resumed           = true;
            const int64_t hdl = e.seq_park(1);
            ASSERT_GE(hdl, 0);
            ASSERT_TRUE(e.seq_unpark(hdl, 1));
            std::vector<sf::draft_request> none = {{1, all, 4, {}}};
            e.draft_many(none);
            EXPECT_TRUE(none[0].out.empty()) << "a draft from a block that never saw the state";
            const auto p = static_cast<int32_t>(all.size()) - 1;
            ASSERT_EQ(e.decode({{1, {all.back()}, p, true}}), 0);
            out.push_back(e.sample(1, 0, static_cast<uint32_t>(out.size())));
            all.push_back(out.back());
        }
    }
    out.resize(ref.size());
    EXPECT_EQ(out, ref);
    EXPECT_TRUE(resumed);
    EXPECT_GT(drafted, 0);
    EXPECT_GT(accepted, 0) << "the block's greedy guesses are kept where the trunk repeats";
    e.seq_end(1);
    std::filesystem::remove_all(dir);
}

}  // namespace
