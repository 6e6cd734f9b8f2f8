// engine_i over llama.cpp (pinned v0.5.0): one model, one llama_context serving up to
// `parallel` sequences, from one KV pool (serve's default, plain attention models only) or each
// with its own KV stream, llama.cpp `common` for chat templates and samplers. Thread
// rules are those of engine_i.
#pragma once

#include <memory>
#include <string>

#include "engine/engine.h"
#include "engine/llama/gpu_offload.h"
#include "engine/llama/media_projector.h"
#include "engine/llama/speculation.h"

struct llama_model;

namespace sf {

/** Options to load a model (units: tokens, threads). */
struct llama_engine_options {
    std::string model_path;
    // Most tokens one sequence may hold (prompt + generated); 0: the model's training context
    // in the pool (as far as the pool holds), else 8,192 (size_kv, kv_config.h).
    int32_t ctx_size = 0;
    // One KV pool for all sequences (llama.cpp's kv_unified; serve passes it by default) where
    // the model is plain attention; false: a stream of ctx_size cells per sequence, reserved
    // whole (serve --no-kv-unified).
    bool kv_unified = false;
    // Concurrent sequences; 0: max_seqs in the pool, or per stream auto_sequences (kv_config.h)
    // from kv_memory and max_seqs.
    int32_t parallel   = 0;
    int64_t pool_cells = 0;    // set by size_kv: the pool's cells (pooled only)
    int32_t max_seqs   = 128;  // most sequences auto picks (vLLM's max_num_seqs)
    int64_t kv_memory  = 0;    // bytes of KV streams auto may use; 0: a quarter of MemAvailable
    int32_t batch_size = 512;  // prompt tokens per decode (tick budget; decode steps ride on top)
    int32_t threads    = 0;    // 0: number of CPUs
    // KV cache element types (llama-server's --cache-type-k/-v names: f32, f16, bf16, q8_0,
    // q4_0, q4_1, iq4_nl, q5_0, q5_1) and flash attention (auto, on, off). A quantized V cache
    // needs flash attention.
    std::string cache_type_k = "f16";
    std::string cache_type_v = "f16";
    std::string flash_attn   = "auto";
    // Weight repacking for the CPU's faster matrix kernels (llama.cpp's extra buffer types,
    // llama-server's default; --no-repack there). Repacked quantized matrices are multiplied in
    // groups of 4 rows and singly otherwise, which rounds differently: a token computed alone
    // and the same token computed in a batch (a resumed sequence's re-prefill) can differ in
    // the last bits, and a sampled stream can then take another token at a near-tie. Off:
    // every row is computed the same way whatever the batch (measured: the 0.6B Q4_K_M
    // stream equal through a worker kill; bench/results/README.md).
    bool repack = true;
    // Speculative decoding (speculation.h). Off on recurrent and hybrid models: a rejected
    // draft's cells cannot be cut from their memory.
    spec_options spec;
    // GPU offload (gpu_offload.h): by default as many layers as the GPU's memory holds; on a
    // machine without a GPU device every layer stays on the CPU.
    gpu_options gpu;
    // The model's multimodal projector (media_projector.h; serve --mmproj FILE), "" for none:
    // a text-only model. On the GPU when any of the model's layers are.
    std::string mmproj_path;
};

class llama_engine final : public engine_i {
  public:
    /** Loads the model; throws std::runtime_error with a readable message on failure. */
    explicit llama_engine(const llama_engine_options &opts);
    ~llama_engine() override;

    int32_t n_ctx_seq() const override { return opts_.ctx_size; }
    int32_t n_seq_max() const override { return opts_.parallel; }
    int32_t n_batch() const override { return opts_.batch_size + opts_.parallel; }

    std::vector<token_id> tokenize(std::string_view text, bool add_bos) const override;
    std::string token_piece(token_id t) const override;
    bool is_eog(token_id t) const override;
    int32_t n_vocab() const override;
    using engine_i::render_chat;
    bool render_chat(const std::vector<chat_message> &messages, bool add_generation_prompt,
                     const chat_options &options, rendered_prompt &out,
                     std::string &error) const override;

    bool seq_start(int seq, const sampling_params &params, std::span<const token_id> history,
                   size_t n_generated = 0) override;
    /** The chain with its grammar compiled (sampler_build.h); null when there is no grammar. */
    std::shared_ptr<prepared_sampler> prepare_sampler(const sampling_params &params) const override;
    void seq_use_prepared(int seq, std::shared_ptr<prepared_sampler> ready) override;
    int decode(const std::vector<batch_item> &items) override;
    void set_interrupt(const std::atomic<bool> *flag) override;
    token_id sample(int seq, int item, uint32_t index) override;
    /** Plain chains (no grammar, no reasoning budget) of 4+ sequences on ggml's threads. */
    void sample_many(std::span<sample_request> reqs) override;
    bool sample_deferrable(int seq) const override;
    void sample_deferred(int seq, int item, uint32_t index) override;
    void take_deferred(std::vector<std::pair<int, token_id>> &out) override;
    void on_deferred_ready(std::function<void()> wake) override;
    /** Tokens sample_many drew on ggml's threadpool so far (tick thread). */
    uint64_t parallel_samples() const { return parallel_samples_; }
    int32_t spec_draft_max() const override { return spec_draft_max_; }
    void draft(int seq, std::span<const token_id> tokens, int32_t n_max,
               std::vector<token_id> &out) override;
    void draft_many(std::span<draft_request> reqs) override;
    token_id sample_at(int seq, int item, int32_t offset, uint32_t index) override;
    void seq_end(int seq) override;
    int64_t seq_park(int seq) override;
    bool seq_unpark(int64_t handle, int seq) override;
    void seq_drop_parked(int64_t handle) override;
    size_t parked_bytes() const override;
    int64_t kv_cells_used() const override;
    int64_t kv_cells_total() const override;
    bool partial_prefixes() const override { return partial_; }
    bool seq_share(int src, int dst, int32_t n) override;
    bool seq_trim(int seq, int32_t n) override;
    bool seq_save(int seq, host_buffer &out) override;
    bool seq_load(int seq, std::span<const uint8_t> data) override;
    std::vector<int32_t> message_boundaries(const std::vector<chat_message> &messages,
                                            const chat_options &options,
                                            const rendered_prompt &prompt) const override;

    /** The model's name from its metadata (general.name), or the file name. */
    const std::string &model_name() const { return model_name_; }
    /** The loaded weights, for consumers beside the tick loop (llama_embedder, model_info). */
    llama_model *model() const;
    /** Decode threads in use. */
    int32_t threads() const { return threads_; }
    /** Where the layers went: devices and counts (gpu_offload.h). */
    const offload_result &offload() const;
    /** The projector (--mmproj), or null for a text-only model. */
    const media_projector *projector() const;
    /** KV cache bytes per token (kv_config.h); 0 when not per token (recurrent, hybrid). */
    int64_t kv_bytes_per_token() const { return kv_bytes_per_token_; }

    void warm_up() override;

  private:
    void warm_up_chat();
    void start_drafter(int32_t threads);
    void start_mtp(int32_t threads, int32_t capacity);
    void start_projector(int32_t threads);
    struct impl;
    std::unique_ptr<impl> impl_;
    llama_engine_options opts_;
    std::string model_name_;
    bool partial_               = false;  // attention-only memory: prefixes can be shared and cut
    bool pooled_                = false;  // one KV pool (kv_unified) for every sequence
    int32_t threads_            = 1;
    int64_t kv_bytes_per_token_ = 0;
    int32_t spec_draft_max_     = 0;  // 0: speculation off
    uint64_t parallel_samples_  = 0;  // tick thread
};

}  // namespace sf
