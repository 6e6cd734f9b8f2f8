#include "engine/llama/model_info.h"

#include <build-info.h>
#include <llama.h>

#include <openssl/evp.h>

#include <cstdio>
#include <vector>

namespace sf {

model_facts read_model_facts(const llama_model *model) {
    model_facts f;
    std::vector<char> buf(1 << 16);
    const int32_t n = llama_model_meta_count(model);
    for (int32_t i = 0; i < n; ++i) {
        if (llama_model_meta_key_by_index(model, i, buf.data(), buf.size()) < 0) continue;
        std::string key(buf.data());
        // Large arrays (vocabulary, merges) are not useful to show and not rendered anyway.
        if (key.rfind("tokenizer.ggml.", 0) == 0) continue;
        int32_t len = llama_model_meta_val_str_by_index(model, i, buf.data(), buf.size());
        if (len < 0) continue;
        if (static_cast<size_t>(len) >= buf.size()) {
            buf.resize(len + 1);
            llama_model_meta_val_str_by_index(model, i, buf.data(), buf.size());
        }
        std::string val(buf.data());
        if (key == "tokenizer.chat_template") {
            f.chat_template = val;
            continue;
        }
        f.metadata[key] = val;
    }
    if (const char *t = llama_model_chat_template(model, nullptr)) f.chat_template = t;
    f.n_params    = llama_model_n_params(model);
    f.size_bytes  = llama_model_size(model);
    f.n_embd      = llama_model_n_embd(model);
    f.n_ctx_train = llama_model_n_ctx_train(model);
    auto it       = f.metadata.find("general.architecture");
    if (it != f.metadata.end()) f.architecture = it->second;
    char desc[256] = {0};
    llama_model_desc(model, desc, sizeof desc);
    f.description = desc;
    // llama_model_desc is "<arch> <size> <ftype>"; the file type is what follows the second space.
    auto sp1 = f.description.find(' ');
    auto sp2 = sp1 == std::string::npos ? sp1 : f.description.find(' ', sp1 + 1);
    if (sp2 != std::string::npos) f.file_type = f.description.substr(sp2 + 1);
    f.tokenizer_fingerprint = tokenizer_fingerprint(model);
    f.engine                = std::string("llama.cpp ") + llama_build_info();
    return f;
}

std::string tokenizer_fingerprint(const llama_model *model) {
    const llama_vocab *vocab = llama_model_get_vocab(model);
    EVP_MD_CTX *md           = EVP_MD_CTX_new();
    EVP_DigestInit_ex(md, EVP_sha256(), nullptr);
    auto put_i32    = [&](int32_t v) { EVP_DigestUpdate(md, &v, sizeof v); };
    const int32_t n = llama_vocab_n_tokens(vocab);
    put_i32(n);
    put_i32(static_cast<int32_t>(llama_vocab_type(vocab)));
    for (int32_t id : {llama_vocab_bos(vocab), llama_vocab_eos(vocab), llama_vocab_eot(vocab),
                       llama_vocab_pad(vocab)})
        put_i32(id);
    for (int32_t i = 0; i < n; ++i) {
        const char *text = llama_vocab_get_text(vocab, i);
        const std::string t(text ? text : "");
        put_i32(static_cast<int32_t>(t.size()));
        EVP_DigestUpdate(md, t.data(), t.size());
        const float score = llama_vocab_get_score(vocab, i);
        EVP_DigestUpdate(md, &score, sizeof score);
        put_i32(static_cast<int32_t>(llama_vocab_get_attr(vocab, i)));
    }
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(md, out, &len);
    EVP_MD_CTX_free(md);
    std::string hex;
    char b[3];
    for (unsigned i = 0; i < len; ++i) {
        std::snprintf(b, sizeof b, "%02x", out[i]);
        hex += b;
    }
    return hex;
}

}  // namespace sf
