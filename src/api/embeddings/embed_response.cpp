#include "api/embeddings/embed_response.h"

#include <openssl/evp.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>

namespace sf {

using json = nlohmann::json;

void l2_normalize(std::vector<float> &v) {
    double sum = 0;
    for (float x : v) sum += double(x) * double(x);
    if (sum <= 0) return;
    const double inv = 1.0 / std::sqrt(sum);
    for (float &x : v) x = static_cast<float>(x * inv);
}

namespace {

// base64 of the floats' little-endian bytes (x86 and ARM Linux are little-endian).
std::string base64_floats(const std::vector<float> &v) {
    static_assert(sizeof(float) == 4);
    std::string raw(v.size() * 4, '\0');
    std::memcpy(raw.data(), v.data(), raw.size());
    std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                            reinterpret_cast<const unsigned char *>(raw.data()),
                            static_cast<int>(raw.size()));
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return out;
}

}  // namespace

std::string openai_embeddings_body(const std::string &model,
                                   const std::vector<std::vector<float>> &vectors, bool base64,
                                   int32_t prompt_tokens) {
    json data = json::array();
    for (size_t i = 0; i < vectors.size(); ++i) {
        data.push_back(
            {{"object", "embedding"},
             {"index", i},
             {"embedding", base64 ? json(base64_floats(vectors[i])) : json(vectors[i])}});
    }
    return json{{"object", "list"},
                {"data", data},
                {"model", model},
                {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}}
        .dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ollama_embed_body(const std::string &model,
                              const std::vector<std::vector<float>> &vectors, int64_t total_ns,
                              int64_t load_ns, int32_t prompt_tokens) {
    return json{{"model", model},
                {"embeddings", vectors},
                {"total_duration", total_ns},
                {"load_duration", load_ns},
                {"prompt_eval_count", prompt_tokens}}
        .dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ollama_embeddings_body(const std::vector<std::vector<float>> &vectors) {
    return json{{"embedding", vectors.empty() ? std::vector<float>{} : vectors[0]}}.dump();
}

}  // namespace sf
