// Builds embedding answers: OpenAI's {"object":"list","data":[…],"usage"} (float arrays or
// base64 of little-endian float32, as the openai SDKs decode it), Ollama's /api/embed
// {"embeddings":[[…]]} and legacy /api/embeddings {"embedding":[…]}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sf {

/** Scales `v` to unit L2 length (OpenAI and Ollama /api/embed return unit vectors). */
void l2_normalize(std::vector<float> &v);

std::string openai_embeddings_body(const std::string &model,
                                   const std::vector<std::vector<float>> &vectors, bool base64,
                                   int32_t prompt_tokens);

/** /api/embed; durations in nanoseconds. */
std::string ollama_embed_body(const std::string &model,
                              const std::vector<std::vector<float>> &vectors, int64_t total_ns,
                              int64_t load_ns, int32_t prompt_tokens);

/** Legacy /api/embeddings: the first vector (or [] when there is none). */
std::string ollama_embeddings_body(const std::vector<std::vector<float>> &vectors);

}  // namespace sf
