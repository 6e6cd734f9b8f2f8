#include "engine/llama/draft_model.h"

#include <common.h>
#include <llama.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "util/log.h"

namespace sf {

namespace {

/** The id of the largest logit of row `i` of the last decode (greedy drafting). */
token_id argmax_row(llama_context *ctx, int32_t i, int32_t n_vocab) {
    const float *l = llama_get_logits_ith(ctx, i);
    return static_cast<token_id>(std::max_element(l, l + n_vocab) - l);
}

size_t common_prefix_len(std::span<const token_id> a, std::span<const token_id> b) {
    const size_t n = std::min(a.size(), b.size());
    size_t i       = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

}  // namespace

std::string vocab_difference(const llama_model *target, const llama_model *draft) {
    const llama_vocab *vt = llama_model_get_vocab(target);
    const llama_vocab *vd = llama_model_get_vocab(draft);
    if (llama_vocab_type(vt) != llama_vocab_type(vd)) return "its tokenizer is of another type";
    const int32_t nt = llama_vocab_n_tokens(vt), nd = llama_vocab_n_tokens(vd);
    if (nt != nd) {
        return "its vocabulary has " + std::to_string(nd) + " tokens, the model's " +
               std::to_string(nt);
    }
    if (llama_vocab_bos(vt) != llama_vocab_bos(vd) || llama_vocab_eos(vt) != llama_vocab_eos(vd) ||
        llama_vocab_get_add_bos(vt) != llama_vocab_get_add_bos(vd)) {
        return "its BOS/EOS tokens differ from the model's";
    }
    for (int32_t i = 0; i < nt; ++i) {
        const char *a = llama_vocab_get_text(vt, i);
        const char *b = llama_vocab_get_text(vd, i);
        if (std::strcmp(a ? a : "", b ? b : "") != 0) {
            return "token " + std::to_string(i) + " is '" + std::string(b ? b : "") +
                   "' in its vocabulary and '" + std::string(a ? a : "") + "' in the model's";
        }
    }
    return "";
}

struct draft_model::impl {
    llama_model *model       = nullptr;
    llama_context *ctx       = nullptr;
    const llama_vocab *vocab = nullptr;
    llama_batch batch{};
    int32_t n_vocab  = 0;
    int32_t capacity = 0;  // tokens per decode
    struct lane {
        std::vector<token_id> tokens;  // what the lane's memory holds, positions 0..size-1
        int owner         = -1;        // target sequence id drafting here, -1: none
        uint64_t last_use = 0;
    };
    std::vector<lane> lanes;
    uint64_t clock = 0;

    void forget(int l) {
        llama_memory_seq_rm(llama_get_memory(ctx), l, -1, -1);
        lanes[size_t(l)].tokens.clear();
    }
    std::vector<int> assign(std::span<draft_request> reqs);
    void catch_up(std::span<draft_request> reqs, const std::vector<int> &lane_of);
    void extend(std::span<draft_request> reqs, const std::vector<int> &lane_of);
};

draft_model::draft_model(const draft_model_options &opts, const llama_model *target)
    : impl_(std::make_unique<impl>()) {
    if (!std::filesystem::exists(opts.path))
        throw std::runtime_error("draft model file not found: " + opts.path);
    llama_model_params mp = llama_model_default_params();
    impl_->model          = llama_model_load_from_file(opts.path.c_str(), mp);
    if (!impl_->model)
        throw std::runtime_error("cannot load the draft model (not a GGUF llama.cpp can read?): " +
                                 opts.path);
    if (std::string why = vocab_difference(target, impl_->model); !why.empty()) {
        llama_model_free(impl_->model);
        throw std::runtime_error("--model-draft " + opts.path +
                                 ": a draft model must have the model's tokenizer, and " + why);
    }
    impl_->vocab            = llama_model_get_vocab(impl_->model);
    impl_->n_vocab          = llama_vocab_n_tokens(impl_->vocab);
    const int32_t lanes     = std::max(opts.lanes, 1);
    impl_->capacity         = 512 + lanes;
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx                = static_cast<uint32_t>(opts.ctx_size) * static_cast<uint32_t>(lanes);
    cp.n_batch              = static_cast<uint32_t>(impl_->capacity);
    cp.n_ubatch             = cp.n_batch;
    cp.n_seq_max            = static_cast<uint32_t>(lanes);
    cp.kv_unified           = false;  // one stream per lane, as the target's (llama_engine.cpp)
    cp.n_threads            = opts.threads;
    cp.n_threads_batch      = opts.threads;
    cp.no_perf              = true;
    impl_->ctx              = llama_init_from_model(impl_->model, cp);
    if (!impl_->ctx) {
        llama_model_free(impl_->model);
        throw std::runtime_error("cannot create the draft model's context (" +
                                 std::to_string(lanes) + " lanes of " +
                                 std::to_string(opts.ctx_size) + " tokens)");
    }
    if (opts.threadpool) llama_attach_threadpool(impl_->ctx, opts.threadpool, opts.threadpool);
    impl_->batch = llama_batch_init(impl_->capacity, 0, 1);
    impl_->lanes.resize(size_t(lanes));
    SF_LOG_INFO("engine", "draft model %s: %d lanes of %d tokens", opts.path.c_str(), lanes,
                opts.ctx_size);
}

draft_model::~draft_model() {
    llama_batch_free(impl_->batch);
    if (impl_->ctx) llama_free(impl_->ctx);
    if (impl_->model) llama_model_free(impl_->model);
}

int32_t draft_model::lanes() const {
    return static_cast<int32_t>(impl_->lanes.size());
}

// A sequence keeps the lane it drafted in; a newcomer takes the unclaimed lane with the
// longest common prefix, the oldest on a tie. Returns each request's lane (-1: none left).
std::vector<int> draft_model::impl::assign(std::span<draft_request> reqs) {
    std::vector<int> lane_of(reqs.size(), -1);
    std::vector<bool> claimed(lanes.size(), false);
    for (size_t r = 0; r < reqs.size(); ++r) {
        for (size_t l = 0; l < lanes.size(); ++l) {
            if (lanes[l].owner == reqs[r].seq && !claimed[l]) {
                lane_of[r] = static_cast<int>(l);
                claimed[l] = true;
                break;
            }
        }
    }
    for (size_t r = 0; r < reqs.size(); ++r) {
        if (lane_of[r] >= 0) continue;
        int best         = -1;
        size_t best_keep = 0;
        for (size_t l = 0; l < lanes.size(); ++l) {
            if (claimed[l]) continue;
            const size_t keep = common_prefix_len(lanes[l].tokens, reqs[r].tokens);
            if (best < 0 || keep > best_keep ||
                (keep == best_keep && lanes[l].last_use < lanes[size_t(best)].last_use)) {
                best      = static_cast<int>(l);
                best_keep = keep;
            }
        }
        if (best < 0) break;  // every lane drafts for another sequence this tick
        for (auto &ln : lanes)
            if (ln.owner == reqs[r].seq) ln.owner = -1;
        lanes[size_t(best)].owner = reqs[r].seq;
        claimed[size_t(best)]     = true;
        lane_of[r]                = best;
    }
    return lane_of;
}

// Decodes each lane's tokens past what its memory agrees with (at least the last one, whose
// logits give the first draft token), in as many decodes as the batch capacity needs.
void draft_model::impl::catch_up(std::span<draft_request> reqs, const std::vector<int> &lane_of) {
    auto *mem = llama_get_memory(ctx);
    struct pending {
        size_t req;
        size_t next;  // next token of reqs[req].tokens to decode
    };
    std::vector<pending> behind;
    for (size_t r = 0; r < reqs.size(); ++r) {
        const int l = lane_of[r];
        if (l < 0 || reqs[r].tokens.empty() || reqs[r].n_max <= 0) continue;
        auto &ln    = lanes[size_t(l)];
        ln.last_use = clock;
        size_t keep =
            std::min(common_prefix_len(ln.tokens, reqs[r].tokens), reqs[r].tokens.size() - 1);
        if (!llama_memory_seq_rm(mem, l, static_cast<llama_pos>(keep), -1)) {
            forget(l);  // a memory that cannot be cut back: start over
            keep = 0;
        }
        ln.tokens.assign(reqs[r].tokens.begin(), reqs[r].tokens.begin() + long(keep));
        behind.push_back({r, keep});
    }
    while (!behind.empty()) {
        common_batch_clear(batch);
        std::vector<std::pair<size_t, int32_t>> ends;  // request, batch row of its last token
        for (auto &p : behind) {
            const auto &req = reqs[p.req];
            auto &ln        = lanes[size_t(lane_of[p.req])];
            while (p.next < req.tokens.size() && batch.n_tokens < capacity) {
                const bool last = p.next + 1 == req.tokens.size();
                if (last) ends.emplace_back(p.req, batch.n_tokens);
                common_batch_add(batch, req.tokens[p.next], static_cast<llama_pos>(p.next),
                                 {lane_of[p.req]}, last);
                ln.tokens.push_back(req.tokens[p.next]);
                ++p.next;
            }
        }
        if (llama_decode(ctx, batch) != 0) {
            SF_LOG_WARN("engine", "the draft model's decode failed; no drafts this tick");
            for (size_t r = 0; r < reqs.size(); ++r) {
                reqs[r].out.clear();
                if (lane_of[r] >= 0) forget(lane_of[r]);
            }
            return;
        }
        for (auto &[r, row] : ends) reqs[r].out.push_back(argmax_row(ctx, row, n_vocab));
        std::erase_if(behind,
                      [&](const pending &p) { return p.next >= reqs[p.req].tokens.size(); });
    }
}

// Greedy continuation: one batched decode per draft position over the lanes still drafting.
void draft_model::impl::extend(std::span<draft_request> reqs, const std::vector<int> &lane_of) {
    for (;;) {
        common_batch_clear(batch);
        std::vector<size_t> rows;
        for (size_t r = 0; r < reqs.size(); ++r) {
            auto &out = reqs[r].out;
            if (out.empty() || static_cast<int32_t>(out.size()) >= reqs[r].n_max ||
                llama_vocab_is_eog(vocab, out.back()))
                continue;
            auto &ln = lanes[size_t(lane_of[r])];
            common_batch_add(batch, out.back(), static_cast<llama_pos>(ln.tokens.size()),
                             {lane_of[r]}, true);
            ln.tokens.push_back(out.back());
            rows.push_back(r);
        }
        if (rows.empty()) return;
        if (llama_decode(ctx, batch) != 0) {
            for (size_t r : rows) forget(lane_of[r]);  // keep the drafts so far
            return;
        }
        for (size_t i = 0; i < rows.size(); ++i)
            reqs[rows[i]].out.push_back(argmax_row(ctx, static_cast<int32_t>(i), n_vocab));
    }
}

void draft_model::draft(std::span<draft_request> reqs) {
    for (auto &r : reqs) r.out.clear();
    ++impl_->clock;
    const auto lane_of = impl_->assign(reqs);
    impl_->catch_up(reqs, lane_of);
    impl_->extend(reqs, lane_of);
}

}  // namespace sf
