#include "engine/llama/mtp_drafter.h"

#include <common.h>
#include <llama.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

// llama.cpp's staging API for NextN hidden states (llama_set_embeddings_nextn,
// llama_get_embeddings_nextn_ith), exported by libllama; common/speculative.cpp includes it so.
#include "../src/llama-ext.h"
#include "engine/llama/speculation.h"
#include "util/log.h"

namespace sf {

struct mtp_drafter::impl {
    llama_model *model       = nullptr;
    llama_context *target    = nullptr;
    llama_context *ctx       = nullptr;  // LLAMA_CONTEXT_TYPE_MTP
    const llama_vocab *vocab = nullptr;
    llama_batch batch{};  // token and embd (the hidden state row) per position
    int32_t n_embd   = 0;
    int32_t n_vocab  = 0;
    int32_t capacity = 0;

    struct stream {
        int32_t next      = -1;   // the position the block's stream expects next; -1: empty
        int32_t rows_pos0 = 0;    // position of the first kept hidden state
        std::vector<float> rows;  // the target's hidden states of the sequence's last batch
    };
    std::vector<stream> streams;  // by target sequence id

    const float *row_at(const stream &s, int32_t pos) const {
        const int32_t i = pos - s.rows_pos0;
        if (i < 0 || i >= static_cast<int32_t>(s.rows.size() / size_t(n_embd))) return nullptr;
        return s.rows.data() + size_t(i) * size_t(n_embd);
    }
    void add(token_id t, int32_t pos, int seq, const float *h, bool logits) {
        const int32_t i    = batch.n_tokens++;
        batch.token[i]     = t;
        batch.pos[i]       = pos;
        batch.n_seq_id[i]  = 1;
        batch.seq_id[i][0] = seq;
        batch.logits[i]    = logits;
        float *dst         = batch.embd + size_t(i) * size_t(n_embd);
        if (h) {
            std::memcpy(dst, h, sizeof(float) * size_t(n_embd));
        } else {
            std::fill(dst, dst + n_embd, 0.0f);  // position 0 has no hidden state before it
        }
    }
    void reset(int seq) {
        llama_memory_seq_rm(llama_get_memory(ctx), seq, -1, -1);
        streams[size_t(seq)].next = -1;
        streams[size_t(seq)].rows.clear();
    }
    token_id argmax(int32_t i) const {
        const float *l = llama_get_logits_ith(ctx, i);
        return static_cast<token_id>(std::max_element(l, l + n_vocab) - l);
    }
};

mtp_drafter::mtp_drafter(llama_model *model, llama_context *target, const mtp_drafter_options &opts)
    : impl_(std::make_unique<impl>()) {
    if (llama_model_n_layer_nextn(model) <= 0)
        throw std::runtime_error(
            "--spec-type mtp: the model has no multi-token-prediction (NextN) layers");
    impl_->model            = model;
    impl_->target           = target;
    impl_->vocab            = llama_model_get_vocab(model);
    impl_->n_vocab          = llama_vocab_n_tokens(impl_->vocab);
    impl_->n_embd           = llama_model_n_embd_out(model);
    impl_->capacity         = std::max(opts.n_batch, 1);
    llama_context_params cp = llama_context_default_params();
    cp.ctx_type             = LLAMA_CONTEXT_TYPE_MTP;
    cp.n_ctx           = static_cast<uint32_t>(opts.ctx_size) * static_cast<uint32_t>(opts.n_seq);
    cp.n_batch         = static_cast<uint32_t>(impl_->capacity);
    cp.n_ubatch        = cp.n_batch;
    cp.n_seq_max       = static_cast<uint32_t>(opts.n_seq);
    cp.kv_unified      = false;  // one stream per sequence, as the target's (llama_engine.cpp)
    cp.n_threads       = opts.threads;
    cp.n_threads_batch = opts.threads;
    cp.no_perf         = true;
    impl_->ctx         = llama_init_from_model(model, cp);
    if (!impl_->ctx)
        throw std::runtime_error("--spec-type mtp: cannot create the NextN block's context");
    if (opts.threadpool) llama_attach_threadpool(impl_->ctx, opts.threadpool, opts.threadpool);
    llama_set_embeddings_nextn(target, true, /*masked=*/false);
    llama_set_embeddings_nextn(impl_->ctx, true, /*masked=*/true);
    impl_->batch = llama_batch_init(impl_->capacity, impl_->n_embd, 1);
    // llama_batch_init allocates either tokens or embeddings; the block reads both
    // (llama_batch_free frees both).
    impl_->batch.token =
        static_cast<llama_token *>(std::malloc(sizeof(llama_token) * size_t(impl_->capacity)));
    impl_->streams.resize(size_t(std::max(opts.n_seq, 1)));
    SF_LOG_INFO("engine", "multi-token prediction: %d NextN layer(s), %d streams of %d tokens",
                llama_model_n_layer_nextn(model), opts.n_seq, opts.ctx_size);
}

mtp_drafter::~mtp_drafter() {
    llama_batch_free(impl_->batch);
    if (impl_->target) llama_set_embeddings_nextn(impl_->target, false, false);
    if (impl_->ctx) llama_free(impl_->ctx);
}

// The batch holds each sequence's tokens together and in position order (llama_engine::decode
// adds one item per sequence). Position k goes to the block as (token k, hidden state k-1).
void mtp_drafter::observe(const llama_batch &tb) {
    auto &m = *impl_;
    if (tb.n_tokens <= 0 || !tb.token) return;
    common_batch_clear(m.batch);
    std::vector<int> seqs;
    for (int32_t beg = 0; beg < tb.n_tokens;) {
        const int seq = tb.seq_id[beg][0];
        int32_t end   = beg + 1;
        while (end < tb.n_tokens && tb.seq_id[end][0] == seq) ++end;
        if (seq < 0 || size_t(seq) >= m.streams.size()) {
            beg = end;
            continue;
        }
        auto &s         = m.streams[size_t(seq)];
        const int32_t a = tb.pos[beg];
        // The stream continues at a when it expects a and holds the hidden state before it.
        const float *prev = s.next == a && a > 0 ? m.row_at(s, a - 1) : nullptr;
        if (!prev) m.reset(seq);
        if (prev || a == 0) m.add(tb.token[beg], a, seq, prev, false);  // else: starts at a+1
        for (int32_t k = beg + 1; k < end; ++k)
            m.add(tb.token[k], tb.pos[k], seq, llama_get_embeddings_nextn_ith(m.target, k - 1),
                  false);
        // Keep the hidden states trim() can need: a verified step's (its token and draft), the
        // tail of a longer item. A cut further back starts the stream over.
        const int32_t keep = std::min(end - beg, k_spec_draft_limit + 1);
        s.rows_pos0        = tb.pos[end - keep];
        s.rows.resize(size_t(keep) * size_t(m.n_embd));
        for (int32_t k = end - keep; k < end; ++k)
            std::memcpy(s.rows.data() + size_t(k - (end - keep)) * size_t(m.n_embd),
                        llama_get_embeddings_nextn_ith(m.target, k),
                        sizeof(float) * size_t(m.n_embd));
        s.next = tb.pos[end - 1] + 1;
        seqs.push_back(seq);
        beg = end;
    }
    if (m.batch.n_tokens == 0) return;
    if (llama_decode(m.ctx, m.batch) != 0) {
        SF_LOG_WARN("engine", "the NextN block's decode failed; its sequences draft again later");
        for (int seq : seqs) m.reset(seq);
    }
}

void mtp_drafter::trim(int seq, int32_t n) {
    auto &m = *impl_;
    if (seq < 0 || size_t(seq) >= m.streams.size()) return;
    auto &s = m.streams[size_t(seq)];
    if (s.next < 0 || s.next <= n) return;  // nothing of the block's stream is past n
    if (n <= 0 || !m.row_at(s, n - 1) ||
        !llama_memory_seq_rm(llama_get_memory(m.ctx), seq, n, -1)) {
        m.reset(seq);
        return;
    }
    s.next = n;
}

void mtp_drafter::forget(int seq) {
    if (seq >= 0 && size_t(seq) < impl_->streams.size()) impl_->reset(seq);
}

void mtp_drafter::draft(std::span<draft_request> reqs) {
    auto &m = *impl_;
    for (auto &r : reqs) r.out.clear();
    common_batch_clear(m.batch);
    std::vector<size_t> rows;  // rows[i]: the request of batch row i
    for (size_t r = 0; r < reqs.size(); ++r) {
        const auto &q = reqs[r];
        if (q.n_max <= 0 || q.tokens.size() < 2 || q.seq < 0 || size_t(q.seq) >= m.streams.size())
            continue;
        const auto &s     = m.streams[size_t(q.seq)];
        const int32_t pos = static_cast<int32_t>(q.tokens.size()) - 1;
        const float *h    = s.next == pos ? m.row_at(s, pos - 1) : nullptr;
        if (!h) continue;
        m.add(q.tokens.back(), pos, q.seq, h, true);
        rows.push_back(r);
    }
    std::vector<int> touched;
    for (size_t r : rows) touched.push_back(reqs[r].seq);
    std::vector<size_t> still;
    while (!rows.empty()) {
        if (llama_decode(m.ctx, m.batch) != 0) {
            SF_LOG_WARN("engine",
                        "the NextN block's draft decode failed; no more drafts this tick");
            break;
        }
        // Row i's logits and hidden state stay in the context's buffers until the next decode:
        // the next batch is built straight from them.
        common_batch_clear(m.batch);
        still.clear();
        for (size_t i = 0; i < rows.size(); ++i) {
            auto &q          = reqs[rows[i]];
            const token_id t = m.argmax(static_cast<int32_t>(i));
            q.out.push_back(t);
            if (static_cast<int32_t>(q.out.size()) >= q.n_max || llama_vocab_is_eog(m.vocab, t))
                continue;
            const auto pos = static_cast<int32_t>(q.tokens.size() - 1 + q.out.size());
            m.add(t, pos, q.seq, llama_get_embeddings_nextn_ith(m.ctx, static_cast<int32_t>(i)),
                  true);
            still.push_back(rows[i]);
        }
        std::swap(rows, still);
    }
    // Drafting wrote the block's cells from the last token on: the next observe() writes them
    // again from the target's own hidden states.
    for (int seq : touched) {
        const auto &s = m.streams[size_t(seq)];
        llama_memory_seq_rm(llama_get_memory(m.ctx), seq, s.next, -1);
    }
}

}  // namespace sf
