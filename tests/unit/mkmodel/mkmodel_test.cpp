// Tests for tools/mkmodel: determinism, and that llama.cpp loads and runs what it writes.
#include <gtest/gtest.h>
#include <llama.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "decode_threads.h"
#include "llama_handles.h"
#include "mkmodel.h"

namespace fs = std::filesystem;
namespace mk = sf::mkmodel;

namespace {

using sf::test::context_ptr;
using sf::test::model_ptr;
using sf::test::read_file;

class MkmodelTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
        llama_backend_init();
    }

    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("sf-mkmodel-test-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Writes a model and returns its path; fails the test on error.
    fs::path write(const mk::options &opt, const std::string &name) {
        const fs::path p      = dir_ / name;
        const std::string err = mk::write_model(opt, p.string());
        EXPECT_EQ(err, "") << "writing " << p;
        return p;
    }

    static model_ptr load(const fs::path &p) {
        llama_model_params mp = llama_model_default_params();
        mp.vocab_only         = false;
        return model_ptr(llama_model_load_from_file(p.string().c_str(), mp));
    }

    static std::vector<llama_token> tokenize(const llama_vocab *vocab, const std::string &text) {
        std::vector<llama_token> out(text.size() + 8);
        const int32_t n = llama_tokenize(vocab, text.data(), int32_t(text.size()), out.data(),
                                         int32_t(out.size()), /*add_special=*/true,
                                         /*parse_special=*/true);
        out.resize(n < 0 ? 0 : size_t(n));
        return out;
    }

    // A context of `n_ctx` tokens, batches of `n_batch`, `n_seq` sequences, the tests' threads.
    static context_ptr context(llama_model *model, uint32_t n_ctx, uint32_t n_batch,
                               uint32_t n_seq = 1) {
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx                = n_ctx;
        cp.n_batch              = n_batch;
        cp.n_seq_max            = n_seq;
        cp.n_threads            = sf::test::k_decode_threads;
        cp.n_threads_batch      = sf::test::k_decode_threads;
        return context_ptr(llama_init_from_model(model, cp));
    }

    // Decodes a few tokens in one batch and checks that the last logits are finite.
    static void decode_once(llama_model *model) {
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx                = 256;
        cp.n_batch              = 256;
        cp.n_threads            = sf::test::k_decode_threads;
        cp.n_threads_batch      = sf::test::k_decode_threads;
        context_ptr ctx(llama_init_from_model(model, cp));
        ASSERT_NE(ctx, nullptr);
        std::vector<llama_token> toks =
            tokenize(llama_model_get_vocab(model), "<|im_start|>user\nHello there<|im_end|>\n");
        ASSERT_GE(toks.size(), 4u);
        ASSERT_EQ(llama_decode(ctx.get(), llama_batch_get_one(toks.data(), int32_t(toks.size()))),
                  0);
        const float *logits = llama_get_logits_ith(ctx.get(), -1);
        ASSERT_NE(logits, nullptr);
        const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
        for (int32_t i = 0; i < n_vocab; ++i) ASSERT_TRUE(std::isfinite(logits[i])) << i;
    }

    fs::path dir_;
};

TEST_F(MkmodelTest, ListsPresetsAndArchs) {
    EXPECT_EQ(mk::presets(),
              (std::vector<std::string>{"tiny", "bench", "qwen3-0.6b", "qwen3-32b"}));
    EXPECT_EQ(mk::quants(), (std::vector<std::string>{"q4_k_m", "q8_0"}));
    EXPECT_EQ(mk::archs(), (std::vector<std::string>{"qwen3", "llama", "lfm2", "glm4moe"}));
    EXPECT_EQ(mk::model_name({}), "superfluid-tiny-qwen3-s1");
}

TEST_F(MkmodelTest, RejectsBadOptions) {
    mk::options bad_preset;
    bad_preset.preset = "huge";
    EXPECT_NE(mk::write_model(bad_preset, (dir_ / "a.gguf").string()), "");
    mk::options bad_arch;
    bad_arch.arch = "gpt2";
    EXPECT_NE(mk::write_model(bad_arch, (dir_ / "b.gguf").string()), "");
    EXPECT_NE(mk::write_model({}, ""), "");
    mk::options quant_of_tiny;  // tiny and bench have one layout
    quant_of_tiny.quant = "q8_0";
    EXPECT_NE(mk::write_model(quant_of_tiny, (dir_ / "c.gguf").string()), "");
    mk::options bad_quant;
    bad_quant.preset = "qwen3-0.6b";
    bad_quant.quant  = "q2_k";
    EXPECT_NE(mk::write_model(bad_quant, (dir_ / "d.gguf").string()), "");
    mk::options llama_06b;  // the real Qwen3 shape is Qwen3's
    llama_06b.preset = "qwen3-0.6b";
    llama_06b.arch   = "llama";
    EXPECT_NE(mk::write_model(llama_06b, (dir_ / "e.gguf").string()), "");
    mk::options llama_32b;  // likewise, refused before any weight is made
    llama_32b.preset = "qwen3-32b";
    llama_32b.arch   = "llama";
    EXPECT_NE(mk::write_model(llama_32b, (dir_ / "f.gguf").string()), "");
    EXPECT_TRUE(fs::is_empty(dir_)) << "no file or temporary left behind";
}

TEST_F(MkmodelTest, SameSeedSameBytesOtherSeedOtherBytes) {
    mk::options opt;
    opt.seed            = 7;
    const std::string a = read_file(write(opt, "a.gguf"));
    const std::string b = read_file(write(opt, "sub/dir/b.gguf"));  // creates parents
    opt.seed            = 8;
    const std::string c = read_file(write(opt, "c.gguf"));
    ASSERT_GT(a.size(), 1000000u);
    EXPECT_TRUE(a == b) << "same seed must give identical bytes";
    EXPECT_EQ(a.size(), c.size());
    EXPECT_FALSE(a == c) << "another seed must give other weights";
    // Only the three models, no temporaries.
    size_t n = 0;
    for (const auto &e : fs::recursive_directory_iterator(dir_)) n += e.is_regular_file();
    EXPECT_EQ(n, 3u);
}

TEST_F(MkmodelTest, Qwen3LoadsWithTokenizerAndTemplate) {
    const fs::path p = write({}, "tiny.gguf");
    model_ptr model  = load(p);
    ASSERT_NE(model, nullptr);

    char buf[256];
    ASSERT_GT(llama_model_meta_val_str(model.get(), "general.name", buf, sizeof buf), 0);
    EXPECT_STREQ(buf, "superfluid-tiny-qwen3-s1");
    ASSERT_GT(llama_model_meta_val_str(model.get(), "general.architecture", buf, sizeof buf), 0);
    EXPECT_STREQ(buf, "qwen3");
    EXPECT_EQ(llama_model_n_embd(model.get()), 64);
    EXPECT_EQ(llama_model_n_layer(model.get()), 2);
    EXPECT_EQ(llama_model_n_ctx_train(model.get()), 32768);

    const char *tmpl = llama_model_chat_template(model.get(), nullptr);
    ASSERT_NE(tmpl, nullptr);
    EXPECT_EQ(std::string(tmpl), std::string(mk::chat_template()));
    EXPECT_NE(std::string(tmpl).find("<think>"), std::string::npos);

    const llama_vocab *vocab = llama_model_get_vocab(model.get());
    EXPECT_EQ(llama_vocab_n_tokens(vocab), 151936);
    EXPECT_FALSE(llama_vocab_get_add_bos(vocab));
    EXPECT_EQ(llama_vocab_eos(vocab), 151645);
    EXPECT_TRUE(llama_vocab_is_eog(vocab, 151645)) << "<|im_end|> ends a turn";

    EXPECT_EQ(tokenize(vocab, "<think>"), std::vector<llama_token>{151667});
    EXPECT_EQ(tokenize(vocab, "</think>"), std::vector<llama_token>{151668});
    EXPECT_EQ(tokenize(vocab, "<tool_call>"), std::vector<llama_token>{151657});
    EXPECT_EQ(tokenize(vocab, "</tool_response>"), std::vector<llama_token>{151666});
    EXPECT_EQ(tokenize(vocab, "<|im_start|>"), std::vector<llama_token>{151644});
    EXPECT_EQ(tokenize(vocab, "<|vision_pad|>"), std::vector<llama_token>{151654});
    // User-defined tokens print as text; control tokens only when asked to.
    char piece[32];
    int32_t n = llama_token_to_piece(vocab, 151667, piece, sizeof piece, 0, /*special=*/false);
    EXPECT_EQ(std::string(piece, size_t(n > 0 ? n : 0)), "<think>");
    EXPECT_TRUE(llama_vocab_is_control(vocab, 151644));
    EXPECT_FALSE(llama_vocab_is_control(vocab, 151667));
}

// lfm2 is the hybrid the prefix cache is tested on: its recurrent state cannot be cut back,
// but saved whole and restored into another sequence it continues like the original.
TEST_F(MkmodelTest, Lfm2IsHybridWithUncuttableStateThatRestores) {
    mk::options opt;
    opt.arch         = "lfm2";
    const fs::path p = write(opt, "lfm2.gguf");
    model_ptr model  = load(p);
    ASSERT_NE(model, nullptr);
    EXPECT_TRUE(llama_model_is_hybrid(model.get()));
    EXPECT_EQ(llama_model_n_layer(model.get()), 2);
    EXPECT_EQ(mk::model_name(opt), "superfluid-tiny-lfm2-s1");

    context_ptr ctx = context(model.get(), 512, 256, 2);
    ASSERT_NE(ctx, nullptr);
    auto toks =
        tokenize(llama_model_get_vocab(model.get()),
                 "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
    ASSERT_GE(toks.size(), 6u);
    llama_batch b = llama_batch_init(256, 0, 1);
    auto run      = [&](int seq, size_t from, size_t to) {
        b.n_tokens = 0;
        for (size_t i = from; i < to; ++i) {
            b.token[b.n_tokens]     = toks[i];
            b.pos[b.n_tokens]       = int32_t(i);
            b.n_seq_id[b.n_tokens]  = 1;
            b.seq_id[b.n_tokens][0] = seq;
            b.logits[b.n_tokens]    = i + 1 == to;
            b.n_tokens++;
        }
        EXPECT_EQ(llama_decode(ctx.get(), b), 0);
        const float *l = llama_get_logits_ith(ctx.get(), -1);
        return std::vector<float>(l, l + 16);
    };
    const size_t half = toks.size() / 2;
    run(0, 0, half);
    llama_memory_t mem = llama_get_memory(ctx.get());
    EXPECT_FALSE(llama_memory_seq_rm(mem, 0, int32_t(half) - 1, -1));  // no partial cut
    std::vector<uint8_t> state(llama_state_seq_get_size(ctx.get(), 0));
    ASSERT_EQ(llama_state_seq_get_data(ctx.get(), state.data(), state.size(), 0), state.size());
    const auto whole = run(0, half, toks.size());
    ASSERT_EQ(llama_state_seq_set_data(ctx.get(), state.data(), state.size(), 1), state.size());
    const auto restored = run(1, half, toks.size());
    for (size_t i = 0; i < whole.size(); ++i) EXPECT_FLOAT_EQ(whole[i], restored[i]) << i;
    llama_batch_free(b);
}

TEST_F(MkmodelTest, BothArchsDecode) {
    for (const std::string &arch : mk::archs()) {
        SCOPED_TRACE(arch);
        mk::options opt;
        opt.arch         = arch;
        const fs::path p = write(opt, arch + ".gguf");
        model_ptr model  = load(p);
        ASSERT_NE(model, nullptr);
        EXPECT_EQ(llama_model_chat_template(model.get(), nullptr),
                  std::string(mk::chat_template()));
        decode_once(model.get());
    }
}

// qwen3-0.6b: the real Qwen3-0.6B shapes and parameter count (596,049,920, as llama.cpp counts
// the real model's GGUF), Q4_K_M by default, and it decodes. About 30 s on 2 cores.
TEST_F(MkmodelTest, Qwen3_06bHasTheRealShapeAndDecodes) {
    mk::options opt;
    opt.preset      = "qwen3-0.6b";
    model_ptr model = load(write(opt, "q06.gguf"));
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(llama_model_n_params(model.get()), 596049920u);
    EXPECT_EQ(llama_model_n_embd(model.get()), 1024);
    EXPECT_EQ(llama_model_n_layer(model.get()), 28);
    EXPECT_EQ(llama_model_n_head(model.get()), 16);
    EXPECT_EQ(llama_model_n_head_kv(model.get()), 8);
    EXPECT_EQ(llama_model_n_ctx_train(model.get()), 40960);
    char desc[128];
    llama_model_desc(model.get(), desc, sizeof desc);
    EXPECT_NE(std::string(desc).find("Q4_K - Medium"), std::string::npos) << desc;
    decode_once(model.get());
}

// --eog-scale: the scaled <|im_end|> row wins the logits after some inputs, not all (so turns
// end after a few tokens), while scale 1 leaves it an ordinary token; the name says it.
TEST_F(MkmodelTest, EogScaleMakesTheEndOfTurnTheTopTokenAfterSomeInputs) {
    auto count_eog_wins = [&](float scale) {
        mk::options opt;
        opt.eog_scale           = scale;
        model_ptr model         = load(write(opt, "e" + std::to_string(int(scale)) + ".gguf"));
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx                = 64;
        cp.n_threads            = 1;  // one token per decode: no thread barriers to spin on
        cp.n_threads_batch      = 1;
        context_ptr ctx(llama_init_from_model(model.get(), cp));
        int wins = 0;
        for (llama_token t = 1000; t < 1000 + 40 * 97; t += 97) {
            llama_memory_clear(llama_get_memory(ctx.get()), true);
            llama_token in = t;
            EXPECT_EQ(llama_decode(ctx.get(), llama_batch_get_one(&in, 1)), 0);
            const float *logits = llama_get_logits_ith(ctx.get(), -1);
            const int32_t n     = llama_vocab_n_tokens(llama_model_get_vocab(model.get()));
            int32_t best        = 0;
            for (int32_t i = 1; i < n; ++i) best = logits[i] > logits[best] ? i : best;
            wins += best == 151645;
        }
        return wins;
    };
    EXPECT_EQ(count_eog_wins(1.0f), 0);
    const int wins = count_eog_wins(64.0f);
    RecordProperty("eog_wins_of_40", wins);
    EXPECT_GT(wins, 2);
    EXPECT_LT(wins, 38);
    mk::options opt;
    opt.eog_scale = 64.0f;
    EXPECT_EQ(mk::model_name(opt), "superfluid-tiny-qwen3-s1-e64");
}

// --nonempty-answers: after the answer prompt ("<|im_start|>assistant\n", or "</think>\n\n"
// of a turn without thinking) <|im_end|> is far below the top logit whatever came before, while
// after other inputs it still wins at a share of positions (turns still end).
TEST_F(MkmodelTest, NonemptyAnswersNeverEndAtTheFirstTokenButStillEnd) {
    mk::options opt;
    opt.eog_scale        = 32.0f;
    opt.nonempty_answers = true;
    EXPECT_EQ(mk::model_name(opt), "superfluid-tiny-qwen3-s1-e32-n");
    model_ptr model = load(write(opt, "n.gguf"));
    ASSERT_NE(model, nullptr);
    const llama_vocab *vocab = llama_model_get_vocab(model.get());
    context_ptr ctx          = context(model.get(), 2048, 2048);
    ASSERT_NE(ctx, nullptr);
    const int32_t n = llama_vocab_n_tokens(vocab);
    // The end token's logit less the best other one after `text`.
    auto end_margin = [&](const std::string &text) {
        llama_memory_clear(llama_get_memory(ctx.get()), true);
        auto toks = tokenize(vocab, text);
        EXPECT_EQ(llama_decode(ctx.get(), llama_batch_get_one(toks.data(), int32_t(toks.size()))),
                  0);
        const float *l = llama_get_logits_ith(ctx.get(), -1);
        float best     = -1e30f;
        for (int32_t i = 0; i < n; ++i)
            if (i != 151645) best = std::max(best, l[i]);
        return l[151645] - best;
    };
    const char *words[] = {"amber", "basil", "tool", "{", "\"name\":", "file", "\n", "cedar"};
    uint32_t x          = 7;
    float worst         = -1e30f;
    for (int i = 0; i < 12; ++i) {
        std::string user;
        const int len = 5 + i * 40;
        for (int w = 0; w < len; ++w)
            user += std::string(words[(x = x * 1103515245u + 12345u) >> 29]) + " ";
        const std::string turn = "<|im_start|>system\nYou help.<|im_end|>\n<|im_start|>user\n" +
                                 user + "<|im_end|>\n<|im_start|>assistant\n";
        worst = std::max({worst, end_margin(turn), end_margin(turn + "<think>\n\n</think>\n\n")});
    }
    RecordProperty("worst_end_margin_at_answer_start", std::to_string(worst));
    EXPECT_LT(worst, -20.0f) << "the end token came near the top at an answer's first position";
    int wins = 0;
    for (llama_token t = 1000; t < 1000 + 40 * 97; t += 97)
        wins +=
            end_margin(std::string("<|im_start|>assistant\n") + llama_vocab_get_text(vocab, t)) > 0;
    RecordProperty("eog_wins_of_40", wins);
    EXPECT_GT(wins, 2) << "answers still end";
}

}  // namespace

// glm4moe: llama.cpp loads the trunk and, asked to, the NextN block after it, and decodes.
TEST_F(MkmodelTest, Glm4moeHasATrunkAndOneNextnBlock) {
    mk::options opt;
    opt.arch              = "glm4moe";
    const fs::path p      = write(opt, "glm.gguf");
    llama_model_params mp = llama_model_default_params();
    mp.load_mtp           = true;
    model_ptr m(llama_model_load_from_file(p.string().c_str(), mp));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(llama_model_n_layer_nextn(m.get()), 1);
    EXPECT_EQ(llama_model_n_layer(m.get()), 2);  // the trunk: the tiny preset's 2 layers
    decode_once(m.get());
}
