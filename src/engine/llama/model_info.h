// Facts about a loaded llama_model for Ollama's /api/show and /api/tags: GGUF metadata,
// chat template, parameter count, size, architecture. Read once; plain data.
#pragma once

#include <cstdint>
#include <map>
#include <string>

struct llama_model;

namespace sf {

struct model_facts {
    std::map<std::string, std::string> metadata;  // GGUF key → value as llama.cpp renders it
    std::string chat_template;                    // tokenizer.chat_template, "" when none
    uint64_t n_params   = 0;
    uint64_t size_bytes = 0;  // weights
    int32_t n_embd      = 0;
    int32_t n_ctx_train = 0;
    std::string architecture;                // general.architecture
    std::string file_type;                   // e.g. "F16", "Q4_K - Medium" (from llama_model_desc)
    std::string description;                 // llama_model_desc, e.g. "qwen3 ?B F16"
    int64_t kv_bytes_per_token = 0;          // KV cache per token (kv_config.h), set by the worker
    std::string cache_type_k, cache_type_v;  // the KV cache's element types, set by the worker
    std::string tokenizer_fingerprint;       // tokenizer_fingerprint() of the model
    std::string model_fingerprint;           // the model file's sampled hash, set by the worker
    std::string
        engine;  // "llama.cpp b<build>-<commit>" (common/build-info), set by read_model_facts
    // Where the layers run (engine/llama/gpu_offload.h), set by the worker: "CPU" or the GPU
    // devices; layers on them out of every offloadable layer (n_layer + 1).
    std::string devices = "CPU";
    int32_t gpu_layers  = 0;
    int32_t n_layers    = 0;
    // What the projector (--mmproj, media_projector.h) takes, set by the worker; both false for
    // a text-only model.
    bool vision = false;
    bool audio  = false;
};

/**
 * SHA-256 (lower-case hex) of the model's vocabulary: the token count, each token's text,
 * score and attributes in id order, the tokenizer type and the special tokens' ids (BOS, EOS,
 * EOT, PAD). Equal fingerprints tokenize and detokenize alike, so a session may move between
 * nodes that report the same one (issue #17).
 */
std::string tokenizer_fingerprint(const llama_model *model);

/** Reads the facts of `model`. Array metadata values are left out (llama.cpp gives none). */
model_facts read_model_facts(const llama_model *model);

}  // namespace sf
