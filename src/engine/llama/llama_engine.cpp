#include "engine/llama/llama_engine.h"

#include <chat.h>
#include <common.h>
#include <ggml-cpu.h>
#include <llama.h>
#include <sampling.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include "engine/llama/chat_render.h"
#include "engine/llama/deferred_sampling.h"
#include "engine/llama/draft_model.h"
#include "engine/llama/gpu_offload.h"
#include "engine/llama/gumbel_sampler.h"
#include "engine/llama/kv_config.h"
#include "engine/llama/llama_engine_impl.h"
#include "engine/llama/message_boundaries.h"
#include "engine/llama/mtp_drafter.h"
#include "engine/llama/parallel_sampling.h"
#include "engine/llama/sampler_build.h"
#include "engine/llama/token_memo.h"
#include "engine/llama/utf8_guard_sampler.h"
#include "util/log.h"

namespace sf {

namespace {

// Routes llama.cpp's log through ours; its INFO chatter only at SUPERFLUID_LOG=debug.
void llama_log_cb(ggml_log_level level, const char *text, void *) {
    auto lvl = level == GGML_LOG_LEVEL_ERROR  ? log::level::ERROR
               : level == GGML_LOG_LEVEL_WARN ? log::level::WARN
                                              : log::level::DEBUG;
    if (!log::enabled(lvl)) return;
    std::string s(text);
    while (!s.empty() && s.back() == '\n') s.pop_back();
    if (!s.empty()) log::write(lvl, "llama", "%s", s.c_str());
}

std::once_flag backend_once;

// Loads the weights with the layers `opts.gpu` puts on GPU devices (gpu_offload.h); `cp` is the
// context to fit them beside (--gpu-layers auto), null when no fit runs. Null on failure.
llama_model *load_weights(const llama_engine_options &opts, llama_model_params &mp,
                          offload_result &offload, std::vector<float> &split,
                          llama_context_params *cp = nullptr) {
    llama_context_params none = llama_context_default_params();
    gpu_options g             = opts.gpu;
    if (!cp && g.layers < 0 && gpu_device_count() == 0) g.layers = 0;
    offload        = plan_offload(opts.model_path, g, mp, cp ? *cp : none, split);
    llama_model *m = llama_model_load_from_file(opts.model_path.c_str(), mp);
    if (m)
        SF_LOG_INFO("engine", "%s",
                    offload_done(offload, llama_model_n_layer(m), mp.n_gpu_layers).c_str());
    return m;
}

}  // namespace

llama_engine::llama_engine(const llama_engine_options &opts)
    : impl_(std::make_unique<impl>()), opts_(opts) {
    std::call_once(backend_once, [] {
        llama_log_set(llama_log_cb, nullptr);
        llama_backend_init();
    });
    if (!std::filesystem::exists(opts.model_path)) {
        throw std::runtime_error("model file not found: " + opts.model_path);
    }
    llama_model_params mp = llama_model_default_params();
    mp.use_extra_bufts    = opts.repack;  // llama-server's --no-repack when false
    mp.load_mtp           = opts.spec.type == spec_type::MTP;  // the NextN block's weights
    // With --gpu-layers auto and a GPU, the layer count is fitted to the device's free memory
    // with the context's real size, which needs the sequence count, which needs the model's
    // shape: a metadata-only load (no_alloc: no weights read) answers that first.
    const bool fit_layers = opts.gpu.layers < 0 && gpu_device_count() > 0;
    llama_model *shape    = nullptr;
    if (fit_layers) {
        llama_model_params meta = mp;
        meta.no_alloc           = true;
        meta.load_mode          = LLAMA_LOAD_MODE_NONE;  // no mapping either (as fit.cpp does)
        shape                   = llama_model_load_from_file(opts.model_path.c_str(), meta);
    } else {
        shape = impl_->model = load_weights(opts, mp, impl_->offload, impl_->tensor_split);
    }
    if (!shape)
        throw std::runtime_error("cannot load model (not a GGUF llama.cpp can read?): " +
                                 opts.model_path);
    // Recurrent and hybrid memories refuse partial removal, and a sliding-window cache has
    // dropped old cells: there, only whole saved states are reusable (ENGINE-NOTES.md).
    partial_ = !llama_model_is_recurrent(shape) && !llama_model_is_hybrid(shape) &&
               llama_model_n_swa(shape) == 0;
    // One KV pool for all sequences (kv_unified, serve's default) where the memory is plain
    // attention (kv_config.h says how big); otherwise a stream of ctx_size cells per sequence.
    pooled_ = opts.kv_unified && partial_ && sf::kv_bytes_per_token(shape, opts_) > 0;
    {
        std::string why;
        size_kv(shape, opts_, pooled_, fit_layers ? gpu_free_bytes() : 0, why);
        SF_LOG_INFO("engine", "KV cache: %s", why.c_str());
    }

    int32_t threads =
        opts.threads > 0 ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
    if (opts.spec.type != spec_type::NONE) {
        if (partial_) {
            spec_draft_max_ = std::clamp(opts.spec.draft_max, 1, k_spec_draft_limit);
        } else {
            SF_LOG_WARN("engine",
                        "speculative decoding is off: this model's memory cannot drop "
                        "a rejected draft (recurrent, hybrid or sliding-window)");
        }
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx                = static_cast<uint32_t>(pooled_ ? opts_.pool_cells
                                                            : int64_t(opts_.ctx_size) * opts_.parallel);
    // Room for a full prefill budget plus one decode step per sequence (scheduler ticks), plus
    // each sequence's draft when speculating (the drafts ride on top of the planned tokens).
    const int32_t capacity = n_batch() + opts_.parallel * spec_draft_max_;
    cp.n_batch             = static_cast<uint32_t>(capacity);
    cp.n_ubatch            = cp.n_batch;
    cp.n_seq_max           = opts_.parallel;
    // The pool (pooled_, serve's default): every sequence's cells in one KV cache, a prefix
    // shared by several sequences held once (seq_share), flash attention visiting only each
    // token's own cells in position order, and a batch cut into ubatches as for streams
    // (scripts/patches/llama-kq-ranges.patch; docs/ARCHITECTURE.md, "KV memory"). Otherwise
    // (--no-kv-unified, or a model whose memory is per sequence) one stream per sequence.
    cp.kv_unified      = pooled_;
    threads_           = threads;
    cp.n_threads       = threads;
    cp.n_threads_batch = threads;
    cp.no_perf         = true;
    if (std::string err; !apply_kv_options(opts, cp, err)) {
        llama_model_free(shape);
        throw std::runtime_error(err);
    }
    if (fit_layers) {
        llama_model_free(shape);
        impl_->model = load_weights(opts, mp, impl_->offload, impl_->tensor_split, &cp);
        if (!impl_->model) throw std::runtime_error("cannot load model: " + opts.model_path);
    }
    impl_->vocab      = llama_model_get_vocab(impl_->model);
    impl_->tokens     = std::make_unique<token_memo>(impl_->vocab);
    impl_->utf8_table = utf8_token_table_build(impl_->vocab);
    impl_->ctx        = llama_init_from_model(impl_->model, cp);
    if (!impl_->ctx) {
        llama_model_free(impl_->model);
        throw std::runtime_error(
            "cannot create a llama.cpp context (ctx-size/parallel too large? a quantized V "
            "cache needs --flash-attn on or auto on a backend that has it)");
    }
    kv_bytes_per_token_        = sf::kv_bytes_per_token(impl_->model, opts);
    ggml_threadpool_params tpp = ggml_threadpool_params_default(threads);
    impl_->threadpool          = ggml_threadpool_new(&tpp);
    if (impl_->threadpool) {
        llama_attach_threadpool(impl_->ctx, impl_->threadpool, impl_->threadpool);
    } else {
        SF_LOG_WARN("engine", "no persistent threadpool (%d threads): ggml makes one per decode",
                    threads);
    }
    if (!opts.mmproj_path.empty()) start_projector(threads);
    if (spec_draft_max_ > 0 && opts.spec.type == spec_type::DRAFT) start_drafter(threads);
    if (spec_draft_max_ > 0 && opts.spec.type == spec_type::MTP) start_mtp(threads, capacity);
    impl_->templates = common_chat_templates_init(impl_->model, "");
    impl_->boundaries =
        std::make_unique<message_boundary_finder>(impl_->templates.get(), impl_->vocab);
    impl_->batch = llama_batch_init(capacity, 0, 1);
    impl_->samplers.assign(opts_.parallel, nullptr);
    impl_->grammars.assign(opts_.parallel, nullptr);
    impl_->deferred = std::make_unique<deferred_sampler>(llama_vocab_n_tokens(impl_->vocab));
    impl_->plain.assign(opts_.parallel, 0);
    impl_->prepared.assign(opts_.parallel, nullptr);
    if (impl_->threadpool && threads >= 2)
        impl_->sampling = std::make_unique<parallel_sampler>(llama_vocab_n_tokens(impl_->vocab),
                                                             impl_->threadpool, threads);
    warm_up_chat();

    char name[256] = {0};
    if (llama_model_meta_val_str(impl_->model, "general.name", name, sizeof name) > 0) {
        model_name_ = name;
    } else {
        model_name_ = std::filesystem::path(opts.model_path).stem().string();
    }
    SF_LOG_INFO("engine",
                "loaded %s (%s): ctx %d per sequence x %d sequences, batch %d, %d threads, "
                "speculation %s (draft max %d)",
                opts.model_path.c_str(), model_name_.c_str(), opts_.ctx_size, opts_.parallel,
                opts.batch_size, threads,
                spec_draft_max_ > 0 ? spec_type_name(opts.spec.type) : "off", spec_draft_max_);
}

// Before the first request, the path a request takes is run once with throwaway inputs, as
// llama-server warms up with an empty decode (common.cpp, "warming up the model with an empty
// run"). A process's first pass through each step faults in code and fresh memory: the mmap'd
// weights and compute buffers (first decode, tens of ms), the sampler's candidate array
// (n_vocab entries, 1.8 MB for a 152k vocabulary: 7 ms on the 2-core VM), a state save and
// load. After a restart the first request restores its prefix from disk and would carry all of
// that on top. It runs on the tick thread: that thread's malloc arena then holds the freed
// sampler memory for the first request's sampler (the worker keeps freed memory,
// worker_main.cpp).
void llama_engine::warm_up() {
    std::vector<llama_token> tmp;
    const llama_token bos = llama_vocab_bos(impl_->vocab), eos = llama_vocab_eos(impl_->vocab);
    if (bos != LLAMA_TOKEN_NULL) tmp.push_back(bos);
    if (eos != LLAMA_TOKEN_NULL) tmp.push_back(eos);
    if (tmp.empty()) tmp.push_back(0);
    if (llama_decode(impl_->ctx,
                     llama_batch_get_one(tmp.data(), static_cast<int32_t>(tmp.size())))) {
        SF_LOG_WARN("engine", "the warm-up decode failed; the first request pays its cost");
    } else {
        common_params_sampling sp;
        sp.no_perf = true;
        if (common_sampler *s = common_sampler_init(impl_->model, sp)) {
            gumbel_sampler_install(common_sampler_get(s), 0);
            common_sampler_sample(s, impl_->ctx, -1);
            common_sampler_free(s);
        }
        host_buffer state;
        if (seq_save(0, state)) {
            llama_memory_seq_rm(llama_get_memory(impl_->ctx), 0, -1, -1);
            seq_load(0, state.span());
        }
    }
    llama_memory_clear(llama_get_memory(impl_->ctx), true);
    llama_synchronize(impl_->ctx);
}

// The chat template and tokenizer, once: a first rendering took 8.6 ms against 4.3 ms warm.
void llama_engine::warm_up_chat() {
    try {
        rendered_prompt r;
        std::string err;
        render_chat({{"system", "You are a helpful assistant."}, {"user", "Hello!"}}, true, {}, r,
                    err);
    } catch (const std::exception &) {
        // A template that cannot render this fails the requests too, with their own error.
    }
}

llama_engine::~llama_engine() {
    impl_->deferred.reset();  // its thread may hold a sequence's samplers
    for (int i = 0; i < static_cast<int>(impl_->samplers.size()); ++i) impl_->free_sampler(i);
    for (auto &[h, p] : impl_->parked) {
        if (p.sampler) common_sampler_free(p.sampler);
        if (p.grammar) llama_sampler_free(p.grammar);
    }
    llama_batch_free(impl_->batch);
    impl_->boundaries.reset();  // it reads the templates
    impl_->templates.reset();
    if (impl_->ctx) llama_free(impl_->ctx);
    if (impl_->threadpool) ggml_threadpool_free(impl_->threadpool);
    impl_->projector.reset();  // it reads the model
    if (impl_->model) llama_model_free(impl_->model);
}

// The projector (--mmproj) beside the model: on the GPU when the model's layers went there.
void llama_engine::start_projector(int32_t threads) {
    try {
        impl_->projector = std::make_unique<media_projector>(
            opts_.mmproj_path, impl_->model, threads, impl_->offload.gpu_layers > 0);
    } catch (...) {
        impl_->release_on_throw();
        throw;
    }
}

const media_projector *llama_engine::projector() const {
    return impl_->projector.get();
}

llama_model *llama_engine::model() const {
    return impl_->model;
}

const offload_result &llama_engine::offload() const {
    return impl_->offload;
}

std::vector<token_id> llama_engine::tokenize(std::string_view text, bool add_bos) const {
    return impl_->tokens->tokenize(text, add_bos);
}

std::string llama_engine::token_piece(token_id t) const {
    return common_token_to_piece(impl_->vocab, t, /*special=*/true);
}

bool llama_engine::is_eog(token_id t) const {
    return llama_vocab_is_eog(impl_->vocab, t);
}

int32_t llama_engine::n_vocab() const {
    return llama_vocab_n_tokens(impl_->vocab);
}

bool llama_engine::render_chat(const std::vector<chat_message> &messages,
                               bool add_generation_prompt, const chat_options &options,
                               rendered_prompt &out, std::string &error) const {
    try {
        chat_render_result r =
            render_chat_template(impl_->templates.get(), messages, add_generation_prompt, options);
        // Build the grammar once here (a request thread), so a grammar llama.cpp cannot load
        // is a rejected request, not a failure on the tick thread.
        if (!r.constraint.grammar.empty()) {
            llama_sampler *g =
                llama_sampler_init_grammar(impl_->vocab, r.constraint.grammar.c_str(), "root");
            if (!g) throw std::invalid_argument("the output grammar could not be built");
            llama_sampler_free(g);
        }
        out.tokens      = tokenize(r.prompt, llama_vocab_get_add_bos(impl_->vocab));
        out.text        = std::move(r.prompt);
        out.extra_stops = std::move(r.extra_stops);
        out.constraint  = std::move(r.constraint);
        out.parse       = std::move(r.parse);
    } catch (const std::exception &e) {
        error = e.what();
        return false;
    }
    return true;
}

int llama_engine::decode(const std::vector<batch_item> &items) {
    common_batch_clear(impl_->batch);
    impl_->item_logits_index.assign(items.size(), -1);
    impl_->item_n_logits.assign(items.size(), 0);
    // Tokens go in by sequence id. With one KV stream per sequence llama.cpp splits a batch
    // into ubatches of consecutive, increasing sequence ids (llama-batch.cpp split_equal,
    // sequential): in planning order (by class) a tick of 8 decode steps became up to 8
    // graph computes instead of one.
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return items[a].seq < items[b].seq; });
    for (size_t i : order) {
        const auto &it          = items[i];
        const size_t n          = it.tokens.size();
        const size_t n_l        = it.want_logits ? std::clamp<size_t>(it.n_logits, 1, n) : 0;
        impl_->item_n_logits[i] = static_cast<int32_t>(n_l);
        for (size_t k = 0; k < n; ++k) {
            if (k + 1 == n && n_l > 0) impl_->item_logits_index[i] = impl_->batch.n_tokens;
            common_batch_add(impl_->batch, it.tokens[k], it.pos + static_cast<int32_t>(k), {it.seq},
                             k + n_l >= n);
        }
    }
    if (impl_->batch.n_tokens == 0) return 0;
    const int rc = llama_decode(impl_->ctx, impl_->batch);
    if (rc == 0 && impl_->mtp) impl_->mtp->observe(impl_->batch);
    if (rc == 2) {
        // Interrupted (set_interrupt): llama.cpp dropped the ubatch it was computing, but the
        // batch may have been split in several (one per KV stream run) and the earlier ones
        // stay in memory. Each item's cells go, so every sequence is as before the call.
        for (const auto &it : items)
            llama_memory_seq_rm(llama_get_memory(impl_->ctx), it.seq, it.pos, -1);
        return k_decode_interrupted;
    }
    if (rc < -1) {
        // A fatal error keeps the ubatches computed before it (llama.h); an invalid batch (-1)
        // or no room (1) leaves memory as it was. Either way each sequence is as before the
        // call, so the scheduler can decode the batch again in parts.
        for (const auto &it : items)
            llama_memory_seq_rm(llama_get_memory(impl_->ctx), it.seq, it.pos, -1);
    }
    return rc;
}

void llama_engine::set_interrupt(const std::atomic<bool> *flag) {
    // Only where a batch can be taken back whole: a recurrent state computed halfway is lost.
    if (!partial_ || !flag) {
        llama_set_abort_callback(impl_->ctx, nullptr, nullptr);
        return;
    }
    llama_set_abort_callback(
        impl_->ctx, [](void *data) { return static_cast<const std::atomic<bool> *>(data)->load(); },
        const_cast<std::atomic<bool> *>(flag));
}

void llama_engine::draft(int seq, std::span<const token_id> tokens, int32_t n_max,
                         std::vector<token_id> &out) {
    out.clear();
    if (opts_.spec.type == spec_type::NGRAM && spec_draft_max_ > 0)
        ngram_draft(tokens, opts_.spec, std::min(n_max, spec_draft_max_), out);
    if (impl_->drafter || impl_->mtp) {
        draft_request r{seq, tokens, std::min(n_max, spec_draft_max_), {}};
        draft_many({&r, 1});
        out = std::move(r.out);
    }
}

void llama_engine::draft_many(std::span<draft_request> reqs) {
    if (!impl_->drafter && !impl_->mtp) return engine_i::draft_many(reqs);
    for (auto &r : reqs) r.n_max = std::min(r.n_max, spec_draft_max_);
    if (impl_->mtp) return impl_->mtp->draft(reqs);
    impl_->drafter->draft(reqs);
}

// The draft model has a lane (KV stream) per sequence that can draft in one tick: as many as
// the target's sequences, at most 16 (each lane costs ctx_size cells of the draft's KV cache).
void llama_engine::start_drafter(int32_t threads) {
    if (opts_.spec.draft_model.empty()) {
        impl_->release_on_throw();
        throw std::runtime_error("--spec-type draft needs --model-draft FILE");
    }
    draft_model_options o;
    o.path       = opts_.spec.draft_model;
    o.ctx_size   = opts_.ctx_size;
    o.lanes      = std::min(opts_.parallel, 16);
    o.threads    = threads;
    o.threadpool = impl_->threadpool;
    try {
        impl_->drafter = std::make_unique<draft_model>(o, impl_->model);
    } catch (...) {
        impl_->release_on_throw();
        throw;
    }
}

// The NextN block's context has a KV stream per target sequence; it runs on the target's model
// and threadpool (mtp_drafter.h).
void llama_engine::start_mtp(int32_t threads, int32_t capacity) {
    mtp_drafter_options o;
    o.ctx_size   = opts_.ctx_size;
    o.n_seq      = opts_.parallel;
    o.n_batch    = capacity;
    o.threads    = threads;
    o.threadpool = impl_->threadpool;
    try {
        impl_->mtp = std::make_unique<mtp_drafter>(impl_->model, impl_->ctx, o);
    } catch (...) {
        impl_->release_on_throw();
        throw;
    }
}

void llama_engine::seq_end(int seq) {
    llama_memory_seq_rm(llama_get_memory(impl_->ctx), seq, -1, -1);
    impl_->forget_mtp(seq);
    impl_->free_sampler(seq);
}

int64_t llama_engine::seq_park(int seq) {
    llama_context *ctx = impl_->ctx;
    impl::parked_seq p;
    if (!seq_save(seq, p.state)) return -1;
    llama_memory_seq_rm(llama_get_memory(ctx), seq, -1, -1);
    impl_->forget_mtp(seq);
    impl_->deferred->forget(seq);
    p.sampler       = std::exchange(impl_->samplers.at(seq), nullptr);
    p.grammar       = std::exchange(impl_->grammars.at(seq), nullptr);
    const int64_t h = impl_->next_handle++;
    impl_->parked_bytes += p.state.size();
    impl_->parked.emplace(h, std::move(p));
    return h;
}

// A state is restored into one run of free cells (llama-kv-cache.cpp state_read_meta): in a
// shared pool that run may not exist yet; the state then stays parked.
bool llama_engine::seq_unpark(int64_t handle, int seq) {
    auto it = impl_->parked.find(handle);
    if (it == impl_->parked.end()) return false;
    impl_->forget_mtp(seq);
    const auto &state = it->second.state;
    if (llama_state_seq_set_data(impl_->ctx, state.data(), state.size(), seq) != state.size()) {
        llama_memory_seq_rm(llama_get_memory(impl_->ctx), seq, -1, -1);
        return false;
    }
    impl::parked_seq p = std::move(it->second);
    impl_->parked.erase(it);
    impl_->parked_bytes -= p.state.size();
    impl_->free_sampler(seq);
    impl_->samplers.at(seq) = p.sampler;
    impl_->grammars.at(seq) = p.grammar;
    return true;
}

void llama_engine::seq_drop_parked(int64_t handle) {
    auto it = impl_->parked.find(handle);
    if (it == impl_->parked.end()) return;
    if (it->second.sampler) common_sampler_free(it->second.sampler);
    if (it->second.grammar) llama_sampler_free(it->second.grammar);
    impl_->parked_bytes -= it->second.state.size();
    impl_->parked.erase(it);
}

size_t llama_engine::parked_bytes() const {
    return impl_->parked_bytes.load();
}

int64_t llama_engine::kv_cells_used() const {
    return pooled_ ? llama_memory_n_cells_used(llama_get_memory(impl_->ctx)) : -1;
}

int64_t llama_engine::kv_cells_total() const {
    return pooled_ ? llama_memory_n_cells(llama_get_memory(impl_->ctx)) : -1;
}

// Streams are per sequence, and llama_memory_seq_cp across streams copies a whole stream
// buffer only at the next decode (llama-kv-cache.cpp seq_cp): a state saved then would be
// stale. A state copy (get/set, immediate) of the source's cells, then cutting the tail,
// gives `dst` exactly positions [0, n).
// In the shared pool (pooled_) the cells themselves are shared: `dst` gets positions [0, n)
// of `src` as the same cells, no bytes copied; they are held once until neither keeps them.
bool llama_engine::seq_share(int src, int dst, int32_t n) {
    if (pooled_) {
        llama_memory_t mem = llama_get_memory(impl_->ctx);
        impl_->forget_mtp(dst);
        llama_memory_seq_rm(mem, dst, -1, -1);
        llama_memory_seq_cp(mem, src, dst, 0, n);
        if (llama_memory_seq_pos_max(mem, dst) == n - 1) return true;
        llama_memory_seq_rm(mem, dst, -1, -1);
    }
    if (seq_save(src, impl_->share_scratch) && seq_load(dst, impl_->share_scratch.span()) &&
        seq_trim(dst, n))
        return true;
    SF_LOG_WARN("engine", "cannot copy %d cached tokens from sequence %d to %d", n, src, dst);
    llama_memory_seq_rm(llama_get_memory(impl_->ctx), dst, -1, -1);
    return false;
}

bool llama_engine::seq_trim(int seq, int32_t n) {
    if (!llama_memory_seq_rm(llama_get_memory(impl_->ctx), seq, n, -1)) return false;
    if (impl_->mtp) impl_->mtp->trim(seq, n);
    return true;
}

bool llama_engine::seq_save(int seq, host_buffer &out) {
    out.resize(llama_state_seq_get_size(impl_->ctx, seq));
    return !out.empty() &&
           llama_state_seq_get_data(impl_->ctx, out.data(), out.size(), seq) == out.size();
}

bool llama_engine::seq_load(int seq, std::span<const uint8_t> data) {
    impl_->forget_mtp(seq);
    if (llama_state_seq_set_data(impl_->ctx, data.data(), data.size(), seq) == data.size())
        return true;
    llama_memory_seq_rm(llama_get_memory(impl_->ctx), seq, -1, -1);
    return false;
}

std::vector<int32_t> llama_engine::message_boundaries(const std::vector<chat_message> &messages,
                                                      const chat_options &options,
                                                      const rendered_prompt &prompt) const {
    return impl_->boundaries->find(messages, options, prompt);
}

}  // namespace sf
