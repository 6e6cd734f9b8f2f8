// What a GGUF file says about its model, read from its header without loading it (no ggml):
// the metadata `superfluid show` prints (architecture, parameters, context length, embedding
// length, quantization) and the training context `serve` caps --ctx-size at. Blocking file
// reads on the caller's thread.
#pragma once

#include <cstdint>
#include <string>

namespace sf::models {

struct gguf_summary {
    uint32_t version = 0;
    std::string architecture;       // general.architecture, e.g. "qwen3"
    std::string name;               // general.name ("" when absent)
    uint64_t parameters       = 0;  // elements of all tensors in this file (shard)
    uint64_t context_length   = 0;  // {arch}.context_length: the training context, tokens
    uint64_t embedding_length = 0;  // {arch}.embedding_length
    uint64_t block_count      = 0;  // {arch}.block_count (layers)
    std::string quantization;       // from general.file_type ("Q4_K_M"); "" when absent
    uint64_t tensor_count = 0;
};

/**
 * Reads the header of the GGUF file at `path`. False with `error` naming the file and what is
 * wrong: "… is not a GGUF file (bad magic …)", a truncated or malformed header.
 */
bool read_gguf_summary(const std::string &path, gguf_summary &out, std::string &error);

/**
 * "" when `path`'s first four bytes are GGUF's magic; otherwise why it is not a GGUF file:
 * "bad magic \"PK\\x03\\x04\"; a GGUF file starts with \"GGUF\"", or "empty", or "3 bytes".
 */
std::string gguf_magic_problem(const std::string &path);

/** llama.cpp's name of a general.file_type value (LLAMA_FTYPE_*), e.g. 15 → "Q4_K_M". */
std::string gguf_file_type_name(uint32_t file_type);

/** A parameter count as Ollama prints it: "596.05M", "8.19B", "751.63K". */
std::string format_parameter_count(uint64_t n);

}  // namespace sf::models
