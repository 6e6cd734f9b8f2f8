// The sf-utf8 sampler stage (engine/llama/utf8_guard_sampler.h) on the tiny model's real Qwen3
// vocabulary: it removes exactly the candidates that would make the output ill-formed UTF-8,
// given where the output stands.
#include "engine/llama/utf8_guard_sampler.h"

#include <gtest/gtest.h>
#include <llama.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/llama/llama_engine.h"
#include "tiny_engine.h"
#include "util/utf8.h"

namespace {

class Utf8GuardTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        std::string err;
        const auto o = sf::test::tiny_engine_options("utf8-guard", 3, dir_, err);
        ASSERT_EQ(err, "");
        engine_ = new sf::llama_engine(o);
        table_  = sf::utf8_token_table_build(llama_model_get_vocab(engine_->model()));
    }
    static void TearDownTestSuite() {
        delete engine_;
        std::filesystem::remove_all(dir_);
    }
    // The token whose piece is exactly `bytes` (the byte-level vocabulary has one per byte).
    static llama_token token_of(const std::string &bytes) {
        for (size_t id = 0; id < table_->bytes.size(); ++id)
            if (table_->bytes[id] == bytes) return static_cast<llama_token>(id);
        return -1;
    }
    // Applies a chain holding only the guard (after accepting `history`) to every token.
    // `order`, when given, lays the candidates out in that order of ids (else by id).
    static std::vector<llama_token_data> surviving(const std::vector<llama_token> &history,
                                                   const std::vector<llama_token> &order = {}) {
        llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
        sf::utf8_guard_install(chain, table_);
        for (llama_token t : history) llama_sampler_accept(chain, t);
        std::vector<llama_token_data> cand;
        for (size_t id = 0; id < table_->bytes.size(); ++id)
            cand.push_back({static_cast<llama_token>(id), 0.0f, 0.0f});
        if (!order.empty()) {
            cand.clear();
            for (llama_token id : order) cand.push_back({id, 0.0f, 0.0f});
        }
        llama_token_data_array arr{cand.data(), cand.size(), -1, false};
        llama_sampler_apply(chain, &arr);
        llama_sampler_free(chain);
        std::vector<llama_token_data> out;
        for (const auto &d : cand)
            if (std::isfinite(d.logit)) out.push_back(d);
        return out;
    }
    static inline sf::llama_engine *engine_ = nullptr;
    static inline std::shared_ptr<const sf::utf8_token_table> table_;
    static inline std::filesystem::path dir_;
};

TEST_F(Utf8GuardTest, AtABoundaryOnlyWellFormedStartsSurvive) {
    const auto kept = surviving({});
    ASSERT_GT(kept.size(), 100000u);
    EXPECT_LT(kept.size(), table_->bytes.size()) << "some pieces can never start a character";
    for (const auto &d : kept) {
        // Well-formed up to an unfinished last character: its valid prefix is all of it.
        const std::string &b = table_->bytes[static_cast<size_t>(d.id)];
        const size_t whole   = sf::utf8::complete_prefix(b);
        EXPECT_EQ(sf::utf8::sanitize(b.substr(0, whole)), b.substr(0, whole)) << d.id;
    }
    for (const char *bad : {"\xFF", "\xF8", "\xC0", "\x80", "\xBF"}) {
        const llama_token t = token_of(bad);
        ASSERT_GE(t, 0);
        for (const auto &d : kept) EXPECT_NE(d.id, t);
    }
    for (const char *good : {"a", "\xE4", "\xF0", " the"}) {
        const llama_token t = token_of(good);
        ASSERT_GE(t, 0) << good;
        bool found = false;
        for (const auto &d : kept) found = found || d.id == t;
        EXPECT_TRUE(found) << "kept: " << good;
    }
}

// Candidates laid out by id (as set_logits does) take the short path that visits only the ids
// that cannot start a character; shuffled or cut (after a stage that reorders) they are all
// visited. Both remove the same ids.
TEST_F(Utf8GuardTest, AtABoundaryTheSameIdsGoWhateverTheLayout) {
    ASSERT_FALSE(table_->bad_at_boundary.empty());
    auto ids_of = [](const std::vector<llama_token_data> &v) {
        std::vector<llama_token> ids;
        for (const auto &d : v) ids.push_back(d.id);
        std::sort(ids.begin(), ids.end());
        return ids;
    };
    const auto by_id = ids_of(surviving({}));
    EXPECT_EQ(by_id.size(), table_->bytes.size() - table_->bad_at_boundary.size());
    std::vector<llama_token> order(table_->bytes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<llama_token>(i);
    std::mt19937 rng(11);
    std::shuffle(order.begin(), order.end(), rng);
    EXPECT_EQ(ids_of(surviving({}, order)), by_id);
    // The first half of the ids, in order: the short path's later ids are past the end.
    order.resize(order.size() / 2);
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<llama_token>(i);
    std::vector<llama_token> expect;
    for (llama_token id : by_id)
        if (id < static_cast<llama_token>(order.size())) expect.push_back(id);
    EXPECT_EQ(ids_of(surviving({}, order)), expect);
}

TEST_F(Utf8GuardTest, InsideACharacterOnlyItsContinuationSurvives) {
    // After E4 (a 3-byte lead) the next byte must be 80..BF; after ED only 80..9F (no
    // surrogates); after F4 only 80..8F (nothing past U+10FFFF).
    struct expect_case {
        const char *lead;
        uint8_t lo, hi;
    };
    for (const expect_case c : {expect_case{"\xE4", 0x80, 0xBF}, expect_case{"\xED", 0x80, 0x9F},
                                expect_case{"\xF4", 0x80, 0x8F}, expect_case{"\xE0", 0xA0, 0xBF}}) {
        const llama_token lead = token_of(c.lead);
        ASSERT_GE(lead, 0);
        const auto kept = surviving({token_of("x"), lead});
        ASSERT_FALSE(kept.empty());
        for (const auto &d : kept) {
            const std::string &b = table_->bytes[static_cast<size_t>(d.id)];
            if (b.empty()) continue;
            const auto first = static_cast<uint8_t>(b[0]);
            EXPECT_TRUE(first >= c.lo && first <= c.hi)
                << int(first) << " after " << int(uint8_t(c.lead[0]));
        }
        // "a" would break the character.
        for (const auto &d : kept) EXPECT_NE(d.id, token_of("a"));
    }
    // Completed: back at a boundary, "a" is fine again.
    const auto kept = surviving({token_of("\xC3"), token_of("\xA9")});
    bool a_kept     = false;
    for (const auto &d : kept) a_kept = a_kept || d.id == token_of("a");
    EXPECT_TRUE(a_kept);
}

}  // namespace
