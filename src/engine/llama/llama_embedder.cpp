#include "engine/llama/llama_embedder.h"

#include <common.h>
#include <llama.h>

#include <algorithm>

#include "util/log.h"

namespace sf {

llama_embedder::llama_embedder(llama_model *model, int32_t n_ctx, int32_t threads)
    : model_(model), n_ctx_(n_ctx), threads_(threads) {}

llama_embedder::~llama_embedder() {
    if (ctx_) llama_free(ctx_);
}

// Created on the first request: a server that never embeds pays no memory for it.
bool llama_embedder::ensure_context(std::string &error) {
    if (ctx_) return true;
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx                = static_cast<uint32_t>(n_ctx_);
    // A pooled sequence must fit in one micro-batch (llama-server has the same rule).
    cp.n_batch         = static_cast<uint32_t>(n_ctx_);
    cp.n_ubatch        = static_cast<uint32_t>(n_ctx_);
    cp.n_seq_max       = 1;
    cp.embeddings      = true;
    cp.pooling_type    = LLAMA_POOLING_TYPE_MEAN;
    cp.n_threads       = threads_;
    cp.n_threads_batch = threads_;
    cp.no_perf         = true;
    ctx_               = llama_init_from_model(model_, cp);
    if (!ctx_) {
        error = "cannot create the embedding context";
        return false;
    }
    SF_LOG_INFO("engine", "embedding context ready: %d tokens, mean pooling", n_ctx_);
    return true;
}

bool llama_embedder::embed(const std::vector<embed_input> &inputs, bool truncate,
                           std::vector<embed_result> &out, start_error &err) {
    using k                  = start_error::kind;
    err.param                = "input";
    std::string &error       = err.message;
    const llama_vocab *vocab = llama_model_get_vocab(model_);
    const int32_t n_vocab    = llama_vocab_n_tokens(vocab);
    // Tokenize and validate everything before decoding anything.
    std::vector<std::vector<token_id>> toks;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto &in = inputs[i];
        std::vector<token_id> t =
            in.is_text ? common_tokenize(vocab, in.text, llama_vocab_get_add_bos(vocab), true)
                       : in.tokens;
        const std::string which = "input " + std::to_string(i);
        if (t.empty()) {
            err.type = k::INVALID_REQUEST;
            error    = which + " is empty";
            return false;
        }
        for (token_id id : t) {
            if (id < 0 || id >= n_vocab) {
                err.type = k::INVALID_REQUEST;
                error    = which + " has token id " + std::to_string(id) +
                        " outside the vocabulary (0.." + std::to_string(n_vocab - 1) + ")";
                return false;
            }
        }
        if (static_cast<int32_t>(t.size()) > n_ctx_) {
            if (!truncate) {
                err.type = k::CONTEXT_LENGTH;
                error    = which + " is too long: " + std::to_string(t.size()) + " tokens > " +
                        std::to_string(n_ctx_) + " maximum";
                return false;
            }
            t.resize(n_ctx_);  // Ollama's truncate keeps the beginning
        }
        toks.push_back(std::move(t));
    }

    std::lock_guard lk(mu_);
    if (!ensure_context(error)) {
        err.type = k::INTERNAL;
        return false;
    }
    const int32_t n_embd = llama_model_n_embd(model_);
    llama_batch batch    = llama_batch_init(n_ctx_, 0, 1);
    bool ok              = true;
    for (const auto &t : toks) {
        // Each input alone, from an empty cache: its vector is the same whatever ran before.
        llama_memory_clear(llama_get_memory(ctx_), true);
        common_batch_clear(batch);
        for (size_t k = 0; k < t.size(); ++k)
            common_batch_add(batch, t[k], static_cast<llama_pos>(k), {0}, true);
        if (llama_decode(ctx_, batch) != 0) {
            ok = false;
            break;
        }
        const float *v = llama_get_embeddings_seq(ctx_, 0);
        if (!v) {
            ok = false;
            break;
        }
        embed_result r;
        r.values.assign(v, v + n_embd);
        r.tokens = static_cast<int32_t>(t.size());
        out.push_back(std::move(r));
    }
    llama_batch_free(batch);
    if (!ok) {
        err.type = k::INTERNAL;
        error    = "the embedding decode failed";
        out.clear();
    }
    return ok;
}

}  // namespace sf
