// mkmodel: writes tiny GGUF models with random weights for tests and benchmarks.
//
// The models have a real architecture (qwen3 or llama), Qwen3's real tokenizer (the qwen2
// BPE vocabulary of llama.cpp's models/ggml-vocab-qwen2.gguf, with Qwen3's special tokens
// in ids 151646-151668) and Qwen3's real chat template (tools + thinking). Both assets are
// embedded in this library, so writing a model needs no files from the llama.cpp tree.
// Weights come from a seeded, platform-independent generator: the same options give the
// same file, byte for byte, on every machine. mmproj.h writes a tiny vision projector for
// such a model (`mkmodel --mmproj FILE`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sf::mkmodel {

/// What to write.
struct options {
    /// Shape preset, one of presets():
    ///  - "tiny":  embedding 64, 2 layers, 4 heads (2 KV), head dim 16, FFN 192; token
    ///             embedding Q8_0, other matrices F16, norms F32 (16.5 MB). For tests.
    ///  - "bench": embedding 256, 4 layers, 4 heads (2 KV), head dim 64, FFN 768; all
    ///             matrices F16 (about 90 MB). ENGINE-NOTES measured this shape at about
    ///             2.5 s per 7,500-token prefill on 2 cores.
    ///  - "qwen3-0.6b": the real Qwen3-0.6B shapes (embedding 1024, 28 layers, 16 heads (8 KV),
    ///             head dim 128, FFN 3072, context 40,960) at `quant`, for benches where the
    ///             compute is realistic (issue #21): about 0.6 B parameters.
    ///  - "qwen3-32b": Qwen3-32B's shapes (embedding 5120, 64 layers, 64 heads (8 KV), head dim
    ///             128, FFN 25600, context 40,960) at `quant`, tied output layer (the real
    ///             model has its own): 32.8 B parameters, about 19 GB at Q4_K_M and the same
    ///             in memory while writing; rows filled on every core (about a minute on 16).
    ///             For the GPU device check (scripts/device-check.sh, issue #41).
    /// tiny and bench: context length 32,768 tokens; all: vocabulary 151,936 tokens, tied
    /// output layer.
    std::string preset = "tiny";
    /// Architecture, one of archs(): "qwen3" (with per-head Q/K RMS norms), "llama", or
    /// "lfm2" (hybrid: layers alternate a gated short convolution, a recurrent state
    /// llama.cpp cannot cut back, and attention with Q/K norms; the same shape otherwise), or
    /// "glm4moe" (GLM-4.5's layout: attention without Q/K norms, layer 0 a dense FFN, the others
    /// 4 experts of half the FFN width with 2 used per token beside a shared expert, and one
    /// multi-token-prediction (NextN) block after the trunk for `--spec-type mtp`; that block
    /// is written to repeat the trunk's own prediction, so greedy drafts guess that a token
    /// repeats; mkmodel.cpp says why).
    std::string arch = "qwen3";
    /// Seed of the weight generator (splitmix64). Any value is valid.
    uint64_t seed = 1;
    /// Scale of the <|im_end|> row of the token embedding (also its output row: the layer is
    /// tied). 1 writes it like every other row, so the model almost never ends a turn by
    /// itself (thousands of tokens). Larger values make its logit large and positive at a
    /// share of positions, so turns end after a few tokens, as an agent's plain turn needs:
    /// with 64 the tiny model's answers (default sampling, temperature 0.6 to 1) ended after
    /// 1 to 54 tokens, median 6, in 60 chat requests; 16 still runs to hundreds. Part of the
    /// name when not 1.
    float eog_scale = 1.0f;
    /// qwen3 only: an answer never ends at its first token. The output layer is written untied
    /// (output.weight: token_embd's rows, the <|im_end|> row scaled by eog_scale and turned
    /// away from the embeddings of "\n" and "\n\n", the tokens the chat template's answer
    /// prompt ends with; those two input rows are scaled up so the hidden state after them
    /// points along them). Its logit of <|im_end|> after them is about -120 where the others
    /// are within +-1; elsewhere the model ends turns as with eog_scale alone. A random model
    /// that ends at once gives an empty answer, which agents take for a failed turn (OpenClaw
    /// exits 1): with eog_scale 32 alone, 3 of 15 OpenClaw turns began with <|im_end|>.
    /// Adds the output layer (vocabulary x width) to the file. "-n" in the name.
    bool nonempty_answers = false;
    /// Trained context length written to `<arch>.context_length`, tokens; 0 = the preset's.
    /// llama-server caps a slot's context at it, so long-context benches (bench endurance's
    /// 50K tokens) need more than the test presets' 32,768. Part of the name when set.
    uint32_t context_length = 0;
    /// qwen3-0.6b and qwen3-32b only, one of quants(): "q4_k_m" (default: Q4_K matrices, Q6_K
    /// ffn_down, attn_v and embedding; 412 MB) or "q8_0" (about 640 MB). Empty for tiny and bench.
    /// Part of the name when set.
    std::string quant;
    /// Vocabulary, one of tokenizers(): "qwen3" (default) or "qwen2.5", Qwen2.5's: the same
    /// BPE vocabulary with only its 22 special tokens (ids 151643-151664; 151665-151668 stay
    /// padding, where Qwen3 has <tool_response>, </tool_response>, <think>, </think>). A model
    /// with another tokenizer than its target, for the refusal of a draft model (issue #21).
    /// Part of the name when not qwen3.
    std::string tokenizer = "qwen3";
};

/// Writes a GGUF model described by `opt` to `out_path`, creating missing parent
/// directories. The file is written to a temporary name next to `out_path`, synced, then
/// renamed over it, so readers never see a partial file.
/// Takes about 0.5 s and 70 MB of memory (tiny), 1.5 s and 215 MB (bench), measured on 2 cores.
/// Returns "" on success, otherwise a human-readable error message (unknown preset or
/// arch, I/O failure); on error no file is left at `out_path` or the temporary name.
std::string write_model(const options &opt, const std::string &out_path);

/// The model name written to general.name, e.g. "superfluid-tiny-qwen3-s1".
std::string model_name(const options &opt);

/// The embedding width of the model `opt` describes (its preset's `<arch>.embedding_length`),
/// which a projector for it must produce (mmproj.h); 0 for an unknown preset or quant.
uint32_t embedding_length(const options &opt);

/// Names accepted by options::preset, in order of size.
std::vector<std::string> presets();

/// Names accepted by options::quant (qwen3-0.6b).
std::vector<std::string> quants();

/// Names accepted by options::tokenizer.
std::vector<std::string> tokenizers();

/// Names accepted by options::arch.
std::vector<std::string> archs();

/// Qwen3's chat template (llama.cpp's models/templates/Qwen-Qwen3-0.6B.jinja), as
/// embedded in this library and written to tokenizer.chat_template.
std::string_view chat_template();

}  // namespace sf::mkmodel
