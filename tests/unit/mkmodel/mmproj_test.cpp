// Tests for mkmodel's tiny vision projector (tools/mkmodel/mmproj.h): deterministic, loaded by
// llama.cpp's mtmd beside the tiny model, and an image through it changes what the model
// computes, the same image always the same way.
#include <gtest/gtest.h>
#include <llama.h>
#include <mtmd-helper.h>
#include <mtmd.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "decode_threads.h"
#include "llama_handles.h"
#include "mkmodel.h"
#include "mmproj.h"
#include "png_writer.h"

namespace fs = std::filesystem;
namespace mk = sf::mkmodel;

namespace {

using sf::test::context_ptr;
using sf::test::model_ptr;
using sf::test::read_file;

struct mtmd_deleter {
    void operator()(mtmd_context *c) const { mtmd_free(c); }
};
struct bitmap_deleter {
    void operator()(mtmd_bitmap *b) const { mtmd_bitmap_free(b); }
};
struct chunks_deleter {
    void operator()(mtmd_input_chunks *c) const { mtmd_input_chunks_free(c); }
};
using mtmd_ptr   = std::unique_ptr<mtmd_context, mtmd_deleter>;
using bitmap_ptr = std::unique_ptr<mtmd_bitmap, bitmap_deleter>;
using chunks_ptr = std::unique_ptr<mtmd_input_chunks, chunks_deleter>;

// A `w` x `h` PNG: a colour gradient, or (`checker`) a black and white checkerboard of 8 px
// squares, two images nothing in the pipeline could confuse.
std::string make_png(uint32_t w, uint32_t h, bool checker) {
    std::vector<uint8_t> rgb(size_t(w) * h * 3);
    for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
            uint8_t *p = &rgb[(size_t(y) * w + x) * 3];
            if (checker) {
                p[0] = p[1] = p[2] = ((x / 8 + y / 8) % 2) ? 255 : 0;
            } else {
                p[0] = uint8_t(x * 255 / w), p[1] = uint8_t(y * 255 / h), p[2] = 128;
            }
        }
    }
    return sf::test::encode_png(w, h, rgb);
}

class MmprojTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
        mtmd_helper_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
        llama_backend_init();
        dir_ = fs::temp_directory_path() / ("sf-mmproj-test-" + std::to_string(getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        ASSERT_EQ(mk::write_model({}, (dir_ / "tiny.gguf").string()), "");
        ASSERT_EQ(mk::write_projector({}, (dir_ / "mmproj.gguf").string()), "");
        llama_model_params mp = llama_model_default_params();
        mp.n_gpu_layers       = 0;
        model_.reset(llama_model_load_from_file((dir_ / "tiny.gguf").c_str(), mp));
        ASSERT_NE(model_, nullptr);
        mtmd_context_params cp = mtmd_context_params_default();
        cp.use_gpu             = false;
        cp.n_threads           = sf::test::k_decode_threads;
        cp.print_timings       = false;
        mtmd_.reset(mtmd_init_from_file((dir_ / "mmproj.gguf").c_str(), model_.get(), cp));
        ASSERT_NE(mtmd_, nullptr);
    }
    static void TearDownTestSuite() {
        mtmd_.reset();
        model_.reset();
        fs::remove_all(dir_);
    }

    // The bitmap mtmd's helper decodes from the bytes of an image file (nullptr: not an image).
    static bitmap_ptr decode(const std::string &file) {
        const auto w = mtmd_helper_bitmap_init_from_buf(
            mtmd_.get(), reinterpret_cast<const unsigned char *>(file.data()), file.size(),
            /*placeholder=*/false, mtmd_helper_init_opt_default());
        return bitmap_ptr(w.bitmap);
    }

    // The chunks of a chat-like prompt with one image between two texts.
    static chunks_ptr tokenize(const mtmd_bitmap *image) {
        const std::string prompt = std::string("<|im_start|>user\nWhat is in this picture? ") +
                                   mtmd_default_marker() + "<|im_end|>\n<|im_start|>assistant\n";
        mtmd_input_text text{prompt.c_str(), prompt.size(), /*add_special=*/false,
                             /*parse_special=*/true};
        chunks_ptr chunks(mtmd_input_chunks_init());
        EXPECT_EQ(mtmd_tokenize(mtmd_.get(), chunks.get(), &text, &image, 1), 0);
        return chunks;
    }

    // A fresh context of 256 cells, batches of 64.
    static context_ptr new_context() {
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx                = 256;
        cp.n_batch              = 64;
        cp.n_threads = cp.n_threads_batch = sf::test::k_decode_threads;
        context_ptr ctx(llama_init_from_model(model_.get(), cp));
        EXPECT_NE(ctx, nullptr);
        return ctx;
    }

    // The last position's logits after evaluating `image`'s prompt in a fresh context.
    static std::vector<float> logits_after(const std::string &png) {
        const bitmap_ptr image = decode(png);
        EXPECT_NE(image, nullptr);
        if (!image) return {};
        const chunks_ptr chunks = tokenize(image.get());
        const context_ptr ctx   = new_context();
        llama_pos n_past        = 0;
        EXPECT_EQ(mtmd_helper_eval_chunks(mtmd_.get(), ctx.get(), chunks.get(), 0, 0, 64,
                                          /*logits_last=*/true, &n_past),
                  0);
        EXPECT_EQ(size_t(n_past), mtmd_helper_get_n_tokens(chunks.get()));
        const float *l = llama_get_logits_ith(ctx.get(), -1);
        const int n    = llama_vocab_n_tokens(llama_model_get_vocab(model_.get()));
        return l ? std::vector<float>(l, l + n) : std::vector<float>{};
    }

    static inline fs::path dir_;
    static inline model_ptr model_;
    static inline mtmd_ptr mtmd_;
};

TEST_F(MmprojTest, SameOptionsWriteTheSameBytesAndSeedsDiffer) {
    const fs::path a = dir_ / "a.gguf", b = dir_ / "b.gguf", c = dir_ / "c.gguf";
    ASSERT_EQ(mk::write_projector({}, a.string()), "");
    ASSERT_EQ(mk::write_projector({}, b.string()), "");
    mk::options other;
    other.seed = 2;
    ASSERT_EQ(mk::write_projector(other, c.string()), "");
    EXPECT_EQ(read_file(a), read_file(dir_ / "mmproj.gguf"));
    EXPECT_EQ(read_file(a), read_file(b));
    EXPECT_NE(read_file(a), read_file(c));
    EXPECT_EQ(read_file(a).size(), read_file(c).size());
}

TEST_F(MmprojTest, RefusesAnUnknownPreset) {
    mk::options bad;
    bad.preset = "huge";
    EXPECT_NE(mk::write_projector(bad, (dir_ / "bad.gguf").string()), "");
    EXPECT_FALSE(fs::exists(dir_ / "bad.gguf"));
}

TEST_F(MmprojTest, MtmdLoadsItAsAVisionProjectorOfTheModelsWidth) {
    EXPECT_TRUE(mtmd_support_vision(mtmd_.get()));
    EXPECT_FALSE(mtmd_support_audio(mtmd_.get()));
    EXPECT_FALSE(mtmd_decode_use_mrope(mtmd_.get()));
    EXPECT_EQ(mk::embedding_length({}), uint32_t(llama_model_n_embd(model_.get())));
}

TEST_F(MmprojTest, MtmdRefusesAProjectorOfAnotherWidth) {
    mk::options bench;
    bench.preset     = "bench";  // embedding 256; the tiny model's is 64
    const fs::path p = dir_ / "bench-mmproj.gguf";
    ASSERT_EQ(mk::write_projector(bench, p.string()), "");
    mtmd_context_params cp = mtmd_context_params_default();
    cp.use_gpu             = false;
    cp.warmup              = false;
    EXPECT_EQ(mtmd_ptr(mtmd_init_from_file(p.c_str(), model_.get(), cp)), nullptr);
    // Alone (no text model to check against) it loads: the width was the only reason.
    EXPECT_NE(mtmd_ptr(mtmd_init_from_file(p.c_str(), nullptr, cp)), nullptr);
}

TEST_F(MmprojTest, AnImageBecomesTheTokensTheProjectorPromises) {
    // Neither square nor the projector's size: mtmd resizes it to 96 x 96 all the same.
    for (const auto &[w, h] : {std::pair{200u, 120u}, std::pair{16u, 16u}}) {
        const bitmap_ptr image = decode(make_png(w, h, false));
        ASSERT_NE(image, nullptr);
        EXPECT_EQ(mtmd_bitmap_get_nx(image.get()), w);
        const chunks_ptr chunks = tokenize(image.get());
        ASSERT_EQ(mtmd_input_chunks_size(chunks.get()), 3u);  // text, image, text
        const mtmd_input_chunk *img = mtmd_input_chunks_get(chunks.get(), 1);
        EXPECT_EQ(mtmd_input_chunk_get_type(img), MTMD_INPUT_CHUNK_TYPE_IMAGE);
        EXPECT_EQ(mtmd_input_chunk_get_n_tokens(img), mk::projector_image_tokens());
        EXPECT_EQ(mtmd_input_chunk_get_n_pos(img), llama_pos(mk::projector_image_tokens()));
        // The helper names an image by the SHA-256 of its pixels: 64 hex digits.
        EXPECT_EQ(std::string(mtmd_input_chunk_get_id(img)).size(), 64u);
    }
}

TEST_F(MmprojTest, BytesThatAreNoImageAreRefused) {
    EXPECT_EQ(decode("this is not an image at all"), nullptr);
    std::string cut = make_png(32, 32, false);
    cut.resize(cut.size() / 2);
    EXPECT_EQ(decode(cut), nullptr);
}

TEST_F(MmprojTest, DifferentImagesGiveDifferentLogitsTheSameImageTheSame) {
    const std::vector<float> a1 = logits_after(make_png(64, 48, false));
    const std::vector<float> a2 = logits_after(make_png(64, 48, false));
    const std::vector<float> b  = logits_after(make_png(64, 48, true));
    ASSERT_FALSE(a1.empty());
    ASSERT_EQ(a1.size(), b.size());
    EXPECT_EQ(a1, a2);
    double diff = 0;
    for (size_t i = 0; i < a1.size(); ++i) diff = std::max(diff, double(std::abs(a1[i] - b[i])));
    EXPECT_GT(diff, 1e-3) << "the image does not reach the logits";
}

// The design's claim (docs/ARCHITECTURE.md, "Images"): an image's embeddings, encoded once, can
// be decoded in slices, as a prefill chunk boundary inside the image would cut them, and the
// model reads the same image. Reference: mtmd's helper, the image in one batch.
TEST_F(MmprojTest, AnImageDecodedInTwoSlicesReadsAsInOne) {
    const std::string png          = make_png(64, 48, false);
    const std::vector<float> whole = logits_after(png);
    const bitmap_ptr image         = decode(png);
    const chunks_ptr chunks        = tokenize(image.get());
    const context_ptr ctx          = new_context();
    llama_pos n_past               = 0;
    const mtmd_input_chunk *text0  = mtmd_input_chunks_get(chunks.get(), 0);
    ASSERT_EQ(
        mtmd_helper_eval_chunk_single(mtmd_.get(), ctx.get(), text0, 0, 0, 64, false, &n_past), 0);
    const mtmd_input_chunk *img = mtmd_input_chunks_get(chunks.get(), 1);
    ASSERT_EQ(mtmd_encode_chunk(mtmd_.get(), img), 0);
    const float *embd  = mtmd_get_output_embd(mtmd_.get());
    const int n_embd   = llama_model_n_embd_inp(model_.get());
    const int n_tokens = int(mtmd_input_chunk_get_n_tokens(img));
    for (const auto &[from, to] : {std::pair{0, 20}, std::pair{20, n_tokens}}) {
        llama_batch b = llama_batch_init(to - from, n_embd, 1);
        b.n_tokens    = to - from;
        std::copy(embd + size_t(from) * n_embd, embd + size_t(to) * n_embd, b.embd);
        for (int i = 0; i < b.n_tokens; ++i) {
            b.pos[i]       = n_past + i;
            b.n_seq_id[i]  = 1;
            b.seq_id[i][0] = 0;
            b.logits[i]    = false;
        }
        ASSERT_EQ(llama_decode(ctx.get(), b), 0);
        n_past += b.n_tokens;
        llama_batch_free(b);
    }
    const mtmd_input_chunk *text1 = mtmd_input_chunks_get(chunks.get(), 2);
    ASSERT_EQ(
        mtmd_helper_eval_chunk_single(mtmd_.get(), ctx.get(), text1, n_past, 0, 64, true, &n_past),
        0);
    const float *l = llama_get_logits_ith(ctx.get(), -1);
    ASSERT_NE(l, nullptr);
    double diff = 0;
    size_t best = 0, best_whole = 0;
    for (size_t i = 0; i < whole.size(); ++i) {
        diff = std::max(diff, double(std::abs(l[i] - whole[i])));
        if (l[i] > l[best]) best = i;
        if (whole[i] > whole[best_whole]) best_whole = i;
    }
    // Other batch shapes may round differently in the last bits; never by more.
    EXPECT_LT(diff, 1e-3);
    EXPECT_EQ(best, best_whole);
}

}  // namespace
