// The fixture of engine tests that run a real model: a temporary directory with mkmodel's tiny
// qwen3 model and llama_engine options for it.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "decode_threads.h"
#include "engine/llama/llama_engine.h"
#include "mkmodel.h"

namespace sf::test {

/**
 * Writes TMP/sf-<tag>-<pid>/tiny.gguf (mkmodel preset "tiny", arch qwen3, weights `seed`),
 * setting `dir` to that directory (the caller removes it), and returns options that load it:
 * 512 tokens per sequence, 2 sequences, batch 128, the tests' decode threads. `error` is
 * mkmodel's message when writing failed (empty on success).
 */
inline llama_engine_options tiny_engine_options(const std::string &tag, int seed,
                                                std::filesystem::path &dir, std::string &error) {
    dir = std::filesystem::temp_directory_path() / ("sf-" + tag + "-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    llama_engine_options o;
    o.model_path = (dir / "tiny.gguf").string();
    error      = mkmodel::write_model({"tiny", "qwen3", static_cast<uint64_t>(seed)}, o.model_path);
    o.ctx_size = 512;
    o.parallel = 2;
    o.batch_size = 128;
    o.threads    = k_decode_threads;
    return o;
}

}  // namespace sf::test
