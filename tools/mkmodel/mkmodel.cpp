#include "mkmodel.h"

#include <ggml.h>
#include <gguf.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gguf_fill.h"

// Embedded assets (assets.S.in, generated into the build dir by CMake).
extern "C" {
extern const unsigned char sf_mkmodel_vocab[];
extern const uint64_t sf_mkmodel_vocab_size;
extern const unsigned char sf_mkmodel_template[];
extern const uint64_t sf_mkmodel_template_size;
}

namespace sf::mkmodel {
namespace {

using detail::fill_uniform;
using detail::ggml_ptr;
using detail::gguf_ptr;
using detail::splitmix64;

// Token ids of the qwen2/Qwen3 vocabulary (151,936 entries).
constexpr size_t kVocabSize         = 151936;
constexpr int32_t kEndOfText        = 151643;  // <|endoftext|>: padding and BOS (never added)
constexpr int32_t kImEnd            = 151645;  // <|im_end|>: EOS
constexpr int32_t kFirstRenamed     = 151646;  // first padding id that Qwen3 uses
constexpr int32_t kTokenTypeControl = 3;       // llama_token_type values in GGUF
constexpr int32_t kTokenTypeUser    = 4;

// Qwen3's added tokens after <|im_end|>, in id order (Qwen3's tokenizer_config.json).
constexpr const char *kQwen3Specials[] = {
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
};

// Model shape. Numbers from the brief (ENGINE-NOTES.md "Tiny models").
struct shape {
    uint32_t n_embd;
    uint32_t n_layer;
    uint32_t n_head;
    uint32_t n_head_kv;
    uint32_t head_dim;
    uint32_t n_ff;
    uint32_t n_ctx;                         // trained context length, tokens
    ggml_type embd_type;                    // type of token_embd (also the tied output layer)
    ggml_type mat_type    = GGML_TYPE_F16;  // the other matrices
    ggml_type down_v_type = GGML_TYPE_F16;  // ffn_down and attn_v (Q4_K_M keeps them wider)
    uint32_t file_type    = 1;              // general.file_type (llama_ftype): MOSTLY_F16
    // Rows seeded one by one from (seed, tensor, row) and filled on every core: for the
    // large presets, where one generator stream per tensor would take minutes. The small
    // presets keep one stream per tensor, so their files stay byte-identical to earlier ones.
    bool row_seeded = false;
};

// The real Qwen3-0.6B (its config.json: hidden 1024, 28 layers, 16 heads, 8 KV heads, head
// dim 128, intermediate 3072, 40,960 positions) at a quantization: "q8_0" (every matrix
// Q8_0, llama_ftype 7) or "q4_k_m" (llama.cpp's Q4_K_M recipe simplified: Q4_K, with
// ffn_down, attn_v and the tied embedding in Q6_K; llama_ftype 15).
bool qwen3_06b(const std::string &quant, shape &out) {
    out = {1024, 28, 16, 8, 128, 3072, 40960, GGML_TYPE_Q8_0};
    if (quant == "q8_0") {
        out.mat_type = out.down_v_type = GGML_TYPE_Q8_0;
        out.file_type                  = 7;
        return true;
    }
    if (quant == "q4_k_m" || quant.empty()) {
        out.embd_type = out.down_v_type = GGML_TYPE_Q6_K;
        out.mat_type                    = GGML_TYPE_Q4_K;
        out.file_type                   = 15;
        return true;
    }
    return false;
}

// Qwen3-32B's shapes (its config.json: hidden 5120, 64 layers, 64 heads, 8 KV heads, head dim
// 128, intermediate 25600, 40,960 positions; 32.8 B parameters with the tied output layer
// written here, where the real model has its own) at the same quantizations as qwen3-0.6b.
// Q4_K_M is about 19 GB. For the device check's benches (issue #41), written on that machine.
bool qwen3_32b(const std::string &quant, shape &out) {
    if (!qwen3_06b(quant, out)) return false;
    out.n_embd     = 5120;
    out.n_layer    = 64;
    out.n_head     = 64;
    out.n_head_kv  = 8;
    out.n_ff       = 25600;
    out.row_seeded = true;
    return true;
}

bool find_shape(const std::string &preset, const std::string &quant, shape &out) {
    if (preset == "qwen3-0.6b") return qwen3_06b(quant, out);
    if (preset == "qwen3-32b") return qwen3_32b(quant, out);
    if (!quant.empty()) return false;  // the test presets have one layout each
    if (preset == "tiny") {
        out = {64, 2, 4, 2, 16, 192, 32768, GGML_TYPE_Q8_0};
        return true;
    }
    if (preset == "bench") {
        out = {256, 4, 4, 2, 64, 768, 32768, GGML_TYPE_F16};
        return true;
    }
    return false;
}

// Standard deviation of the random matrices; RMS norm weights are 1.
constexpr float kWeightStd = 0.02f;
constexpr float kRmsEps    = 1e-6f;
constexpr float kRopeBase  = 1000000.0f;  // Qwen3's rope theta

// One tensor to create: a matrix [ne0, ne1] in ggml order (ne0 = row length), a stack of ne2
// such matrices (a MoE layer's experts), or a vector when ne1 == 0 (always F32 ones: an RMS
// norm weight, or a MoE router's uniform bias). `fill` says how a matrix is filled.
struct tensor_spec {
    enum class init : uint8_t { random, identity_right };
    std::string name;
    int64_t ne0;
    int64_t ne1;
    ggml_type type;
    int64_t ne2 = 1;
    // identity_right: row r has a 1 in column ne1 + r and 0 elsewhere (an [2E, E] projection
    // that passes the second of two concatenated E-vectors through unchanged).
    init fill = init::random;
    // The generator stream's name when not `name`: an untied output layer starts as a copy of
    // token_embd (row_shape).
    std::string stream = {};
};

// lfm2 (hybrid): layers alternate short convolution (even) and attention (odd), like
// LFM2's mix of conv and GQA blocks; the conv cache spans 3 tokens (LFM2's l_cache).
constexpr uint32_t kShortConvCache = 3;
bool lfm2_attention_layer(uint32_t il) {
    return il % 2 == 1;
}

// glm4moe: GLM-4.5's layout. Layer 0 has a dense FFN, the others a mixture of kExperts experts
// (kExpertsUsed per token, sigmoid router) beside one shared expert, each expert kExpertFfDiv
// times narrower than the dense FFN. One multi-token-prediction (NextN) block follows the
// trunk (blk.<n_layer>): llama.cpp's draft-mtp runs it on the trunk's hidden state at position
// p (after the output norm) and the token at p+1. Its eh_proj passes the hidden state through
// and drops the token, and the block's attention and experts add little (random weights of
// std 0.02), so its logits are about the trunk's own at p: with greedy decoding it guesses
// that the token at p+1 repeats. Random weights give no better guess; this one is right
// whenever the trunk repeats itself, and only with the right hidden state (the one of the
// same sequence and position), so a drafter that mixes them up loses its accepted drafts.
constexpr uint32_t kExperts       = 4;
constexpr uint32_t kExpertsUsed   = 2;
constexpr uint32_t kExpertFfDiv   = 2;
constexpr uint32_t kDenseLead     = 1;
constexpr uint32_t kNextnLayers   = 1;
constexpr uint32_t kGatingSigmoid = 2;  // llama_expert_gating_func_type SIGMOID

void glm4moe_layer(std::vector<tensor_spec> &v, const shape &s, uint32_t il) {
    const int64_t E = s.n_embd, F = s.n_ff, D = s.head_dim, Fe = s.n_ff / kExpertFfDiv;
    const int64_t Q = D * s.n_head, KV = D * s.n_head_kv;
    const ggml_type h = s.mat_type, dv = s.down_v_type, f = GGML_TYPE_F32;
    const std::string p = "blk." + std::to_string(il) + ".";
    v.push_back({p + "attn_norm.weight", E, 0, f});
    v.push_back({p + "attn_q.weight", E, Q, h});
    v.push_back({p + "attn_k.weight", E, KV, h});
    v.push_back({p + "attn_v.weight", E, KV, dv});
    v.push_back({p + "attn_output.weight", Q, E, h});
    v.push_back({p + "post_attention_norm.weight", E, 0, f});
    if (il < kDenseLead) {
        v.push_back({p + "ffn_gate.weight", E, F, h});
        v.push_back({p + "ffn_up.weight", E, F, h});
        v.push_back({p + "ffn_down.weight", F, E, dv});
        return;
    }
    v.push_back({p + "ffn_gate_inp.weight", E, int64_t(kExperts), f});
    v.push_back({p + "exp_probs_b.bias", int64_t(kExperts), 0, f});
    v.push_back({p + "ffn_gate_exps.weight", E, Fe, h, int64_t(kExperts)});
    v.push_back({p + "ffn_up_exps.weight", E, Fe, h, int64_t(kExperts)});
    v.push_back({p + "ffn_down_exps.weight", Fe, E, dv, int64_t(kExperts)});
    v.push_back({p + "ffn_gate_shexp.weight", E, Fe, h});
    v.push_back({p + "ffn_up_shexp.weight", E, Fe, h});
    v.push_back({p + "ffn_down_shexp.weight", Fe, E, dv});
}

std::vector<tensor_spec> glm4moe_specs(const shape &s) {
    const int64_t E = s.n_embd;
    std::vector<tensor_spec> v;
    v.push_back({"token_embd.weight", E, int64_t(kVocabSize), s.embd_type});
    for (uint32_t il = 0; il < s.n_layer + kNextnLayers; ++il) glm4moe_layer(v, s, il);
    const std::string p = "blk." + std::to_string(s.n_layer) + ".nextn.";
    v.push_back(
        {p + "eh_proj.weight", 2 * E, E, GGML_TYPE_F16, 1, tensor_spec::init::identity_right});
    v.push_back({p + "enorm.weight", E, 0, GGML_TYPE_F32});
    v.push_back({p + "hnorm.weight", E, 0, GGML_TYPE_F32});
    v.push_back({"output_norm.weight", E, 0, GGML_TYPE_F32});
    return v;
}

std::vector<tensor_spec> tensor_specs(const shape &s, const std::string &arch) {
    if (arch == "glm4moe") return glm4moe_specs(s);
    const bool qk_norm = arch != "llama";
    const bool lfm2    = arch == "lfm2";
    const int64_t E = s.n_embd, F = s.n_ff, D = s.head_dim;
    const int64_t Q = D * s.n_head, KV = D * s.n_head_kv;
    const ggml_type h = s.mat_type, dv = s.down_v_type, f = GGML_TYPE_F32;
    std::vector<tensor_spec> v;
    v.push_back({"token_embd.weight", E, int64_t(kVocabSize), s.embd_type});
    for (uint32_t il = 0; il < s.n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        v.push_back({p + "attn_norm.weight", E, 0, f});
        if (lfm2 && !lfm2_attention_layer(il)) {
            v.push_back({p + "shortconv.conv.weight", int64_t(kShortConvCache), E, f});
            v.push_back({p + "shortconv.in_proj.weight", E, 3 * E, h});
            v.push_back({p + "shortconv.out_proj.weight", E, E, h});
            v.push_back({p + "ffn_norm.weight", E, 0, f});
            v.push_back({p + "ffn_gate.weight", E, F, h});
            v.push_back({p + "ffn_up.weight", E, F, h});
            v.push_back({p + "ffn_down.weight", F, E, dv});
            continue;
        }
        v.push_back({p + "attn_q.weight", E, Q, h});
        v.push_back({p + "attn_k.weight", E, KV, h});
        v.push_back({p + "attn_v.weight", E, KV, dv});
        v.push_back({p + "attn_output.weight", Q, E, h});
        if (qk_norm) {
            v.push_back({p + "attn_q_norm.weight", D, 0, f});
            v.push_back({p + "attn_k_norm.weight", D, 0, f});
        }
        v.push_back({p + "ffn_norm.weight", E, 0, f});
        v.push_back({p + "ffn_gate.weight", E, F, h});
        v.push_back({p + "ffn_up.weight", E, F, h});
        v.push_back({p + "ffn_down.weight", F, E, dv});
    }
    // No output.weight: tied to token_embd. lfm2 names its output norm token_embd_norm.
    v.push_back({lfm2 ? "token_embd_norm.weight" : "output_norm.weight", E, 0, f});
    return v;
}

// The tokens an answer's first position follows in the Qwen3 template: "\n" ends
// "<|im_start|>assistant\n", "\n\n" ends the "<think>\n\n</think>\n\n" of a turn without
// thinking.
constexpr std::array<int32_t, 2> kAnswerStarts = {198, 271};
// --nonempty-answers: the input rows of kAnswerStarts are scaled by this, so the hidden state
// after them points along their embedding (a random sublayer of std 0.02 adds about 0.3 to
// a residual of norm 0.16 * 16 = 2.6: cosine above 0.99)...
constexpr float kAnswerStartScale = 16.0f;
// ...and the untied output row of <|im_end|> loses its components along those directions and
// gets this many times its own norm against each, so its logit there is about
// -eog_scale * 3 * 0.16 * 8 (-120 at scale 32) where the others' are within about +-1.
constexpr float kAnswerStartGuard = 3.0f;

// How write_row shapes the rows that are not plain random ones (mkmodel.h: eog_scale,
// nonempty_answers).
struct row_shape {
    float eog_scale = 1.0f;
    bool nonempty   = false;
    // nonempty: unit vectors of token_embd's kAnswerStarts rows as first drawn
    std::vector<std::vector<float>> start_dirs;
};

// Row `r` of token_embd as make_tensor draws it, before any shaping (row_seeded: its own
// stream; otherwise the tensor's stream after r rows).
std::vector<float> embd_row(uint64_t seed, int64_t ne0, int64_t r, bool row_seeded) {
    const uint64_t ts = detail::tensor_seed(seed, "token_embd.weight");
    std::vector<float> row(static_cast<size_t>(ne0));
    splitmix64 rng{row_seeded ? splitmix64{ts ^ uint64_t(r)}.next() : ts};
    for (int64_t i = row_seeded ? r : 0; i <= r; ++i)
        fill_uniform(rng, kWeightStd, row.data(), ne0);
    return row;
}

// The output row of <|im_end|> under --nonempty-answers: `row` without its components along
// `dirs`, minus kAnswerStartGuard times its norm along each (see kAnswerStartGuard).
void guard_end_row(std::vector<float> &row, const std::vector<std::vector<float>> &dirs) {
    double norm = 0;
    for (float x : row) norm += double(x) * x;
    norm = std::sqrt(norm);
    for (const auto &u : dirs) {
        double dot = 0;
        for (size_t i = 0; i < row.size(); ++i) dot += double(row[i]) * u[i];
        for (size_t i = 0; i < row.size(); ++i)
            row[i] -= float(dot + kAnswerStartGuard * norm) * u[i];
    }
}

// Writes matrix row `r` of `ts` (ne0 values) to `dst` in the tensor's type: random from
// `rng`, or the identity_right pattern, then shaped by `shape` (the <|im_end|> rows, and under
// nonempty the answer-start input rows).
void write_row(const tensor_spec &ts, int64_t r, splitmix64 &rng, const row_shape &shape,
               std::vector<float> &row, char *dst) {
    if (ts.fill == tensor_spec::init::identity_right) {
        std::fill(row.begin(), row.end(), 0.0f);
        row[size_t(ts.ne1 + r)] = 1.0f;
    } else {
        fill_uniform(rng, kWeightStd, row.data(), ts.ne0);
    }
    const bool embd = ts.name == "token_embd.weight", out = ts.name == "output.weight";
    float scale = 1.0f;
    if (r == kImEnd && (embd || out)) scale = shape.eog_scale;
    if (shape.nonempty && embd && std::ranges::find(kAnswerStarts, r) != kAnswerStarts.end())
        scale = kAnswerStartScale;
    if (shape.nonempty && out && r == kImEnd) guard_end_row(row, shape.start_dirs);
    if (scale != 1.0f)
        for (float &x : row) x *= scale;
    if (ts.type == GGML_TYPE_F16) {
        ggml_fp32_to_fp16_row(row.data(), reinterpret_cast<ggml_fp16_t *>(dst), ts.ne0);
    } else {
        ggml_quantize_chunk(ts.type, row.data(), dst, 0, 1, ts.ne0, nullptr);
    }
}

// Creates the tensor in `ctx` and fills it. Random matrices use their own generator
// stream, seeded from (seed, tensor name), so each tensor is independent of the others;
// with `row_seeded` each row has its own stream (seeded from the tensor's and the row index)
// and rows are filled on every hardware thread, so the bytes do not depend on the count.
// `shape` shapes some rows (write_row).
void make_tensor(ggml_context *ctx, gguf_context *gguf, const tensor_spec &ts, uint64_t seed,
                 const row_shape &shape, bool row_seeded) {
    ggml_tensor *t = ts.ne1 == 0  ? ggml_new_tensor_1d(ctx, ts.type, ts.ne0)
                     : ts.ne2 > 1 ? ggml_new_tensor_3d(ctx, ts.type, ts.ne0, ts.ne1, ts.ne2)
                                  : ggml_new_tensor_2d(ctx, ts.type, ts.ne0, ts.ne1);
    ggml_set_name(t, ts.name.c_str());
    if (ts.ne1 == 0) {
        float *d = static_cast<float *>(t->data);
        for (int64_t i = 0; i < ts.ne0; ++i) d[i] = 1.0f;
        gguf_add_tensor(gguf, t);
        return;
    }
    const uint64_t tensor_seed = detail::tensor_seed(seed, ts.stream.empty() ? ts.name : ts.stream);
    const size_t row_size      = ggml_row_size(ts.type, ts.ne0);
    char *data                 = static_cast<char *>(t->data);
    const int64_t rows         = ts.ne1 * ts.ne2;
    if (!row_seeded) {
        splitmix64 rng{tensor_seed};
        std::vector<float> row(size_t(ts.ne0));
        for (int64_t r = 0; r < rows; ++r)
            write_row(ts, r, rng, shape, row, data + size_t(r) * row_size);
    } else {
        const unsigned n = std::max(1u, std::thread::hardware_concurrency());
        std::atomic<int64_t> next{0};
        std::vector<std::thread> workers;
        for (unsigned i = 0; i < n; ++i) {
            workers.emplace_back([&] {
                std::vector<float> row(size_t(ts.ne0));
                for (int64_t r; (r = next.fetch_add(1)) < rows;) {
                    splitmix64 rng{splitmix64{tensor_seed ^ uint64_t(r)}.next()};
                    write_row(ts, r, rng, shape, row, data + size_t(r) * row_size);
                }
            });
        }
        for (auto &w : workers) w.join();
    }
    gguf_add_tensor(gguf, t);
}

// Qwen2.5's added tokens are the first 19 of Qwen3's list (up to <|file_sep|>).
constexpr size_t kQwen25Specials = 19;

// Copies the tokenizer.* keys of the embedded vocabulary into `out`, renames the padding
// ids 151646-151668 to Qwen3's special tokens (151646-151664 for "qwen2.5") and sets Qwen3's
// EOS and chat template.
std::string add_tokenizer(gguf_context *out, const std::string &tokenizer) {
    gguf_init_params params{/*no_alloc=*/true, /*ctx=*/nullptr};
    gguf_ptr vocab(gguf_init_from_buffer(sf_mkmodel_vocab, size_t(sf_mkmodel_vocab_size), params));
    if (!vocab) return "embedded vocabulary is not a valid GGUF file";

    gguf_ptr tok(gguf_init_empty());
    gguf_set_kv(tok.get(), vocab.get());
    for (int64_t i = gguf_get_n_kv(tok.get()) - 1; i >= 0; --i) {
        const std::string key = gguf_get_key(tok.get(), i);
        if (key.rfind("tokenizer.", 0) != 0) gguf_remove_key(tok.get(), key.c_str());
    }

    const int64_t k_tokens = gguf_find_key(tok.get(), "tokenizer.ggml.tokens");
    const int64_t k_types  = gguf_find_key(tok.get(), "tokenizer.ggml.token_type");
    if (k_tokens < 0 || k_types < 0 || gguf_get_arr_type(tok.get(), k_tokens) != GGUF_TYPE_STRING ||
        gguf_get_arr_type(tok.get(), k_types) != GGUF_TYPE_INT32 ||
        gguf_get_arr_n(tok.get(), k_tokens) != kVocabSize ||
        gguf_get_arr_n(tok.get(), k_types) != kVocabSize) {
        return "embedded vocabulary lacks a 151936-token list with token types";
    }
    std::vector<std::string> tokens(kVocabSize);
    for (size_t i = 0; i < kVocabSize; ++i) tokens[i] = gguf_get_arr_str(tok.get(), k_tokens, i);
    std::vector<int32_t> types(kVocabSize);
    std::memcpy(types.data(), gguf_get_arr_data(tok.get(), k_types), kVocabSize * sizeof(int32_t));
    if (tokens[kEndOfText] != "<|endoftext|>" || tokens[kImEnd] != "<|im_end|>") {
        return "embedded vocabulary is not the qwen2 vocabulary";
    }

    int32_t id             = kFirstRenamed;
    const size_t n_renamed = tokenizer == "qwen2.5" ? kQwen25Specials : std::size(kQwen3Specials);
    for (const char *name : std::span(kQwen3Specials).first(n_renamed)) {
        tokens[size_t(id)] = name;
        types[size_t(id)]  = name[1] == '|' ? kTokenTypeControl : kTokenTypeUser;
        ++id;
    }
    std::vector<const char *> ptrs(kVocabSize);
    for (size_t i = 0; i < kVocabSize; ++i) ptrs[i] = tokens[i].c_str();

    gguf_set_kv(out, tok.get());
    gguf_set_arr_str(out, "tokenizer.ggml.tokens", ptrs.data(), ptrs.size());
    gguf_set_arr_data(out, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types.data(),
                      types.size());
    gguf_set_val_u32(out, "tokenizer.ggml.eos_token_id", uint32_t(kImEnd));
    gguf_set_val_u32(out, "tokenizer.ggml.bos_token_id", uint32_t(kEndOfText));
    gguf_set_val_u32(out, "tokenizer.ggml.padding_token_id", uint32_t(kEndOfText));
    gguf_set_val_bool(out, "tokenizer.ggml.add_bos_token", false);
    gguf_set_val_str(out, "tokenizer.chat_template", std::string(chat_template()).c_str());
    return "";
}

void add_hparams(gguf_context *g, const std::string &arch, const shape &s) {
    auto key = [&](const char *k) { return arch + "." + k; };
    gguf_set_val_u32(g, key("context_length").c_str(), s.n_ctx);
    gguf_set_val_u32(g, key("embedding_length").c_str(), s.n_embd);
    const bool glm4moe = arch == "glm4moe";
    gguf_set_val_u32(g, key("block_count").c_str(), s.n_layer + (glm4moe ? kNextnLayers : 0));
    gguf_set_val_u32(g, key("feed_forward_length").c_str(), s.n_ff);
    gguf_set_val_u32(g, key("attention.head_count").c_str(), s.n_head);
    if (arch == "lfm2") {
        // Per layer: 0 marks a short-convolution layer.
        std::vector<uint32_t> kv(s.n_layer);
        for (uint32_t il = 0; il < s.n_layer; ++il)
            kv[il] = lfm2_attention_layer(il) ? s.n_head_kv : 0;
        gguf_set_arr_data(g, key("attention.head_count_kv").c_str(), GGUF_TYPE_UINT32, kv.data(),
                          kv.size());
        gguf_set_val_u32(g, key("shortconv.l_cache").c_str(), kShortConvCache);
    } else {
        gguf_set_val_u32(g, key("attention.head_count_kv").c_str(), s.n_head_kv);
    }
    gguf_set_val_u32(g, key("attention.key_length").c_str(), s.head_dim);
    gguf_set_val_u32(g, key("attention.value_length").c_str(), s.head_dim);
    gguf_set_val_f32(g, key("attention.layer_norm_rms_epsilon").c_str(), kRmsEps);
    gguf_set_val_f32(g, key("rope.freq_base").c_str(), kRopeBase);
    gguf_set_val_u32(g, key("rope.dimension_count").c_str(), s.head_dim);
    if (glm4moe) {
        gguf_set_val_u32(g, key("nextn_predict_layers").c_str(), kNextnLayers);
        gguf_set_val_u32(g, key("expert_count").c_str(), kExperts);
        gguf_set_val_u32(g, key("expert_used_count").c_str(), kExpertsUsed);
        gguf_set_val_u32(g, key("expert_shared_count").c_str(), 1);
        gguf_set_val_u32(g, key("expert_feed_forward_length").c_str(), s.n_ff / kExpertFfDiv);
        gguf_set_val_u32(g, key("leading_dense_block_count").c_str(), kDenseLead);
        gguf_set_val_u32(g, key("expert_gating_func").c_str(), kGatingSigmoid);
        gguf_set_val_bool(g, key("expert_weights_norm").c_str(), true);
        gguf_set_val_f32(g, key("expert_weights_scale").c_str(), 1.0f);
    }
}

}  // namespace

std::vector<std::string> presets() {
    return {"tiny", "bench", "qwen3-0.6b", "qwen3-32b"};
}

std::vector<std::string> quants() {
    return {"q4_k_m", "q8_0"};
}

std::vector<std::string> tokenizers() {
    return {"qwen3", "qwen2.5"};
}

std::vector<std::string> archs() {
    return {"qwen3", "llama", "lfm2", "glm4moe"};
}

std::string_view chat_template() {
    return {reinterpret_cast<const char *>(sf_mkmodel_template), size_t(sf_mkmodel_template_size)};
}

uint32_t embedding_length(const options &opt) {
    shape s{};
    return find_shape(opt.preset, opt.quant, s) ? s.n_embd : 0;
}

std::string model_name(const options &opt) {
    std::string name = "superfluid-" + opt.preset + "-" + opt.arch +
                       (opt.quant.empty() ? "" : "-" + opt.quant) + "-s" + std::to_string(opt.seed);
    if (opt.eog_scale != 1.0f) {
        char e[32];
        std::snprintf(e, sizeof e, "-e%g", double(opt.eog_scale));
        name += e;
    }
    if (opt.nonempty_answers) name += "-n";
    if (opt.context_length > 0) name += "-c" + std::to_string(opt.context_length);
    if (opt.tokenizer != "qwen3") name += "-" + opt.tokenizer;
    return name;
}

std::string write_model(const options &opt, const std::string &out_path) {
    shape s{};
    if (!find_shape(opt.preset, opt.quant, s)) {
        if (opt.preset == "qwen3-0.6b" || opt.preset == "qwen3-32b")
            return "unknown quant '" + opt.quant + "' (expected q4_k_m or q8_0)";
        if (!opt.quant.empty())
            return "--quant is for the qwen3-0.6b and qwen3-32b presets (tiny and bench have one "
                   "layout)";
        return "unknown preset '" + opt.preset +
               "' (expected tiny, bench, qwen3-0.6b or qwen3-32b)";
    }
    if (opt.context_length > 0) s.n_ctx = opt.context_length;
    if ((opt.preset == "qwen3-0.6b" || opt.preset == "qwen3-32b") && opt.arch != "qwen3")
        return "the " + opt.preset + " preset is Qwen3's shape: --arch qwen3 only";
    if (opt.arch != "qwen3" && opt.arch != "llama" && opt.arch != "lfm2" && opt.arch != "glm4moe") {
        return "unknown arch '" + opt.arch + "' (expected qwen3, llama, lfm2 or glm4moe)";
    }
    if (opt.tokenizer != "qwen3" && opt.tokenizer != "qwen2.5")
        return "unknown tokenizer '" + opt.tokenizer + "' (expected qwen3 or qwen2.5)";
    if (out_path.empty()) return "empty output path";

    std::vector<tensor_spec> specs = tensor_specs(s, opt.arch);
    row_shape shape{opt.eog_scale, opt.nonempty_answers, {}};
    if (opt.nonempty_answers) {
        if (opt.arch != "qwen3") return "--nonempty-answers is for the qwen3 arch";
        // An untied output layer: token_embd's rows but for <|im_end|>'s (write_row).
        specs.push_back({"output.weight", int64_t(s.n_embd), int64_t(kVocabSize), s.embd_type, 1,
                         tensor_spec::init::random, "token_embd.weight"});
        for (int32_t t : kAnswerStarts) {
            auto u      = embd_row(opt.seed, s.n_embd, t, s.row_seeded);
            double norm = 0;
            for (float x : u) norm += double(x) * x;
            for (float &x : u) x = float(x / std::sqrt(norm));
            shape.start_dirs.push_back(std::move(u));
        }
    }
    size_t mem = 0;
    for (const auto &ts : specs) {
        mem += ggml_row_size(ts.type, ts.ne0) * size_t(ts.ne1 == 0 ? 1 : ts.ne1 * ts.ne2);
        mem += ggml_tensor_overhead() + GGML_MEM_ALIGN;
    }
    ggml_init_params ip{/*mem_size=*/mem + 1024, /*mem_buffer=*/nullptr, /*no_alloc=*/false};
    ggml_ptr ctx(ggml_init(ip));
    if (!ctx) return "out of memory allocating " + std::to_string(mem) + " bytes of weights";

    gguf_ptr g(gguf_init_empty());
    gguf_set_val_str(g.get(), "general.architecture", opt.arch.c_str());
    gguf_set_val_str(g.get(), "general.type", "model");
    gguf_set_val_str(g.get(), "general.name", model_name(opt).c_str());
    gguf_set_val_u32(g.get(), "general.file_type", s.file_type);
    gguf_set_val_u32(g.get(), "general.quantization_version", GGML_QNT_VERSION);
    add_hparams(g.get(), opt.arch, s);
    if (std::string err = add_tokenizer(g.get(), opt.tokenizer); !err.empty()) return err;

    for (const auto &ts : specs) make_tensor(ctx.get(), g.get(), ts, opt.seed, shape, s.row_seeded);

    return detail::write_atomically(g.get(), out_path);
}

}  // namespace sf::mkmodel
