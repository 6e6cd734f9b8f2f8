// The llama.cpp engine's state (llama_engine::impl), shared by the files that implement
// llama_engine: llama_engine.cpp (model, context, decode, sequence memory) and
// llama_engine_sampling.cpp (samplers: build, sample, defer). Everything here belongs to the
// tick thread unless its comment says otherwise.
#pragma once

#include <chat.h>
#include <common.h>
#include <ggml-cpu.h>
#include <llama.h>
#include <sampling.h>

#include <atomic>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "engine/llama/deferred_sampling.h"
#include "engine/llama/draft_model.h"
#include "engine/llama/gpu_offload.h"
#include "engine/llama/llama_engine.h"
#include "engine/llama/message_boundaries.h"
#include "engine/llama/mtp_drafter.h"
#include "engine/llama/parallel_sampling.h"
#include "engine/llama/sampler_build.h"
#include "engine/llama/token_memo.h"
#include "engine/llama/utf8_guard_sampler.h"
#include "util/host_buffer.h"

namespace sf {

struct llama_engine::impl {
    llama_model *model = nullptr;
    offload_result offload;           // where the layers went (gpu_offload.h)
    std::vector<float> tensor_split;  // the load's tensor_split (llama.cpp keeps the pointer)
    llama_context *ctx       = nullptr;
    const llama_vocab *vocab = nullptr;
    common_chat_templates_ptr templates;
    llama_batch batch{};
    // One persistent compute threadpool, as llama-server attaches (common.cpp common_threadpools):
    // without it ggml creates and joins its threads on every graph compute, which costs a
    // thread start per tick and, on a loaded 2-core machine, tens of ms of scheduling latency.
    ggml_threadpool *threadpool = nullptr;
    std::vector<common_sampler *> samplers;  // by seq id
    std::vector<llama_sampler *> grammars;   // by seq id: its output grammar, kept apart (or null)
    std::unique_ptr<deferred_sampler> deferred;  // grammar sequences' samples (deferred_sampling.h)
    std::vector<uint8_t> plain;  // by seq id: its chain has no grammar, no reasoning budget
    // By seq id: a chain prepare_sampler built for the next seq_start (tick thread).
    std::vector<std::shared_ptr<prepared_sampler>> prepared;
    std::unique_ptr<parallel_sampler> sampling;  // sample_many on the threadpool (2+ threads)
    std::shared_ptr<const utf8_token_table> utf8_table;  // every chain's sf-utf8 stage
    std::vector<int32_t> item_logits_index;  // batch index of each item's last token, last decode
    std::vector<int32_t> item_n_logits;      // rows with logits of each item (its last tokens)

    struct parked_seq {
        host_buffer state;  // llama_state_seq_get_data of the sequence
        common_sampler *sampler = nullptr;
        llama_sampler *grammar  = nullptr;
    };
    std::map<int64_t, parked_seq> parked;  // tick thread only
    host_buffer share_scratch;             // seq_share's state copy, reused (tick thread)

    std::unique_ptr<message_boundary_finder> boundaries;  // snapshot points (hybrid models)
    int64_t next_handle = 1;
    std::atomic<size_t> parked_bytes{0};
    std::unique_ptr<token_memo> tokens;          // long prompts' tokenization (token_memo.h)
    std::unique_ptr<draft_model> drafter;        // --spec-type draft (tick thread)
    std::unique_ptr<mtp_drafter> mtp;            // --spec-type mtp (tick thread)
    std::unique_ptr<media_projector> projector;  // --mmproj (media_projector.h); before model
    std::vector<llama_token_data> scratch;       // sample_with_grammar's candidates (tick thread)
    // Samples seq (its grammar apart: grammars[seq] set) on this thread from logits row `idx`.
    llama_token sample_grammar(int seq, int32_t idx, uint32_t index) {
        llama_synchronize(ctx);
        return sample_with_grammar(samplers.at(seq), grammars.at(seq),
                                   llama_get_logits_ith(ctx, idx), llama_vocab_n_tokens(vocab),
                                   index, scratch);
    }
    // Frees seq's samplers, once a deferred sample of it (which uses them) is dropped.
    void free_sampler(int seq) {
        if (deferred) deferred->forget(seq);
        if (auto *&s = samplers.at(seq)) common_sampler_free(std::exchange(s, nullptr));
        if (auto *&g = grammars.at(seq)) llama_sampler_free(std::exchange(g, nullptr));
    }
    void forget_mtp(int seq) {
        if (mtp) mtp->forget(seq);
    }
    // Frees what the constructor made before it throws (its destructor will not run).
    void release_on_throw() {
        projector.reset();
        llama_free(ctx);
        if (threadpool) ggml_threadpool_free(threadpool);
        llama_model_free(model);
    }
};

}  // namespace sf
