#include "mmproj.h"

#include <ggml.h>
#include <gguf.h>

#include <cmath>
#include <vector>

#include "gguf_fill.h"

namespace sf::mkmodel {
namespace {

// The vision tower: width, heads, FFN width and layers. mtmd's LLaVA graph runs the first
// n_layer - 1 blocks (it takes the penultimate layer's features, as LLaVA does), so two
// blocks run one. The FFN width differs from the width on purpose: clip.cpp swaps ffn_up and
// ffn_down of "mlp" projectors whose ffn_down rows are as long as the width (old converters).
constexpr uint32_t kVisionEmbd  = 32;
constexpr uint32_t kVisionHeads = 2;
constexpr uint32_t kVisionFf    = 64;
constexpr uint32_t kVisionLayer = 2;
constexpr uint32_t kMlpHidden   = 64;  // mm.0's output width
constexpr float kLayerNormEps   = 1e-6f;
constexpr float kBiasStd        = 0.02f;
constexpr uint32_t kFileTypeF32 = 0;  // llama_ftype ALL_F32

// How a tensor is filled: random with std 1/sqrt(fan-in) (keeps activations near unit scale
// through the layers, so different images stay apart), random biases, or a norm's ones/zeros.
enum class fill : uint8_t { matrix, bias, ones, zeros };

struct proj_tensor {
    std::string name;
    std::vector<int64_t> ne;  // ggml order
    fill how;
};

void add_block(std::vector<proj_tensor> &v, uint32_t il) {
    const int64_t E = kVisionEmbd, F = kVisionFf;
    const std::string p = "v.blk." + std::to_string(il) + ".";
    for (const char *n : {"ln1", "ln2"}) {
        v.push_back({p + n + ".weight", {E}, fill::ones});
        v.push_back({p + n + ".bias", {E}, fill::zeros});
    }
    for (const char *n : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
        v.push_back({p + n + ".weight", {E, E}, fill::matrix});
        v.push_back({p + n + ".bias", {E}, fill::bias});
    }
    v.push_back({p + "ffn_up.weight", {E, F}, fill::matrix});
    v.push_back({p + "ffn_up.bias", {F}, fill::bias});
    v.push_back({p + "ffn_down.weight", {F, E}, fill::matrix});
    v.push_back({p + "ffn_down.bias", {E}, fill::bias});
}

// Tensor names and shapes as clip.cpp's loader reads them for PROJECTOR_TYPE_MLP
// (clip-impl.h TN_* names; load_tensors, "LLaVA projection").
std::vector<proj_tensor> projector_tensors(int64_t text_embd) {
    const int64_t E = kVisionEmbd, P = k_projector_patch_size;
    const int64_t n_patches = projector_image_tokens();
    std::vector<proj_tensor> v;
    v.push_back({"v.patch_embd.weight", {P, P, 3, E}, fill::matrix});  // conv kernel KW,KH,C,OC
    v.push_back({"v.patch_embd.bias", {E}, fill::bias});
    v.push_back({"v.position_embd.weight", {E, n_patches}, fill::bias});
    for (uint32_t il = 0; il < kVisionLayer; ++il) add_block(v, il);
    v.push_back({"mm.0.weight", {E, kMlpHidden}, fill::matrix});
    v.push_back({"mm.0.bias", {kMlpHidden}, fill::bias});
    v.push_back({"mm.2.weight", {kMlpHidden, text_embd}, fill::matrix});
    v.push_back({"mm.2.bias", {text_embd}, fill::bias});
    return v;
}

void make_tensor(ggml_context *ctx, gguf_context *g, const proj_tensor &pt, uint64_t seed) {
    ggml_tensor *t = ggml_new_tensor(ctx, GGML_TYPE_F32, int(pt.ne.size()), pt.ne.data());
    ggml_set_name(t, pt.name.c_str());
    float *d          = static_cast<float *>(t->data);
    const int64_t n   = ggml_nelements(t);
    const int64_t fan = n / pt.ne.back();  // inputs per output (the kernel's KW*KH*C)
    detail::splitmix64 rng{detail::tensor_seed(seed, pt.name)};
    switch (pt.how) {
        case fill::matrix:
            detail::fill_uniform(rng, 1.0f / std::sqrt(float(fan)), d, n);
            break;
        case fill::bias:
            detail::fill_uniform(rng, kBiasStd, d, n);
            break;
        case fill::ones:
            std::fill(d, d + n, 1.0f);
            break;
        case fill::zeros:
            std::fill(d, d + n, 0.0f);
            break;
    }
    gguf_add_tensor(g, t);
}

// The clip.* keys clip.cpp's load_hparams requires (clip-impl.h KEY_*), and GELU.
void add_hparams(gguf_context *g) {
    gguf_set_val_bool(g, "clip.has_vision_encoder", true);
    gguf_set_val_str(g, "clip.projector_type", "mlp");
    gguf_set_val_bool(g, "clip.use_gelu", true);
    gguf_set_val_u32(g, "clip.vision.image_size", k_projector_image_size);
    gguf_set_val_u32(g, "clip.vision.patch_size", k_projector_patch_size);
    gguf_set_val_u32(g, "clip.vision.embedding_length", kVisionEmbd);
    gguf_set_val_u32(g, "clip.vision.feed_forward_length", kVisionFf);
    gguf_set_val_u32(g, "clip.vision.block_count", kVisionLayer);
    gguf_set_val_u32(g, "clip.vision.projection_dim", kMlpHidden);
    gguf_set_val_u32(g, "clip.vision.attention.head_count", kVisionHeads);
    gguf_set_val_f32(g, "clip.vision.attention.layer_norm_epsilon", kLayerNormEps);
    // CLIP's normalisation would do as well; 0.5 maps pixels to [-1, 1].
    const float half[3] = {0.5f, 0.5f, 0.5f};
    gguf_set_arr_data(g, "clip.vision.image_mean", GGUF_TYPE_FLOAT32, half, 3);
    gguf_set_arr_data(g, "clip.vision.image_std", GGUF_TYPE_FLOAT32, half, 3);
}

}  // namespace

std::string projector_name(const options &opt) {
    return "superfluid-" + opt.preset + "-mmproj-s" + std::to_string(opt.seed);
}

std::string write_projector(const options &opt, const std::string &out_path) {
    const uint32_t text_embd = embedding_length(opt);
    if (text_embd == 0) return "unknown preset '" + opt.preset + "' for a projector";
    if (out_path.empty()) return "empty output path";

    const std::vector<proj_tensor> specs = projector_tensors(text_embd);
    size_t mem                           = 1024;
    for (const auto &pt : specs) {
        int64_t n = 1;
        for (int64_t d : pt.ne) n *= d;
        mem += size_t(n) * sizeof(float) + ggml_tensor_overhead() + GGML_MEM_ALIGN;
    }
    detail::ggml_ptr ctx(ggml_init({/*mem_size=*/mem, /*mem_buffer=*/nullptr, /*no_alloc=*/false}));
    if (!ctx) return "out of memory allocating " + std::to_string(mem) + " bytes of weights";

    detail::gguf_ptr g(gguf_init_empty());
    gguf_set_val_str(g.get(), "general.architecture", "clip");
    gguf_set_val_str(g.get(), "general.type", "mmproj");
    gguf_set_val_str(g.get(), "general.name", projector_name(opt).c_str());
    gguf_set_val_u32(g.get(), "general.file_type", kFileTypeF32);
    add_hparams(g.get());
    for (const auto &pt : specs) make_tensor(ctx.get(), g.get(), pt, opt.seed);
    return detail::write_atomically(g.get(), out_path);
}

}  // namespace sf::mkmodel
