// The scheduler's part of speculative decoding (issue #21): drafts into a tick's decode
// steps, and their verification after the decode. Members of `scheduler` (scheduler.h).
#include <algorithm>

#include "scheduler/scheduler.h"

namespace sf {

// N-gram drafts cost no decode pass, only verification rows in this tick's batch; a draft
// model's decodes run before the tick's, for all drafting sequences at once. When an
// interactive sequence is in the tick, only interactive sequences draft: the rows of other
// classes' drafts (each with its output layer) would lengthen the interactive token's tick.
// A draft never runs past the request's max_tokens or the context (the tokens a draft can
// produce are tokens the sequence may still generate), so LENGTH ends where it did without one.
// Each sequence drafts as far as its drafts were kept lately (adapt_drafts).
std::vector<int32_t> scheduler::add_drafts(const std::vector<plan_entry> &plan,
                                           std::vector<batch_item> &items) {
    std::vector<int32_t> n(items.size(), 0);
    const int32_t dmax = engine_.spec_draft_max();
    if (dmax <= 0) return n;
    bool interactive = false;
    for (const auto &e : plan)
        interactive |= slots_[e.slot].seq.req.cls == priority_class::INTERACTIVE;
    std::vector<draft_request> reqs;
    std::vector<size_t> at;  // the item of each request
    for (size_t i = 0; i < items.size(); ++i) {
        auto &s        = slots_[plan[i].slot].seq;
        const auto &it = items[i];
        if (!s.generating || !it.want_logits || it.tokens.size() != 1) continue;
        if (!s.req.sampling.speculative) continue;  // the request opted out
        if (interactive && s.req.cls != priority_class::INTERACTIVE) continue;
        if (s.draft_wait > 0) {
            --s.draft_wait;
            continue;
        }
        const int64_t room =
            std::min<int64_t>({s.draft_len < 0 ? dmax : std::min(s.draft_len, dmax),
                               static_cast<int64_t>(s.req.sampling.max_tokens) - s.n_generated - 1,
                               static_cast<int64_t>(engine_.n_ctx_seq()) - s.n_past - 2});
        if (room <= 0) continue;
        reqs.push_back({plan[i].slot, s.tokens, static_cast<int32_t>(room), {}});
        at.push_back(i);
    }
    if (reqs.empty()) return n;
    engine_.draft_many(reqs);
    for (size_t r = 0; r < reqs.size(); ++r) {
        auto &d = reqs[r].out;
        if (d.empty()) continue;
        if (static_cast<int32_t>(d.size()) > reqs[r].n_max) d.resize(size_t(reqs[r].n_max));
        auto &it = items[at[r]];
        it.tokens.insert(it.tokens.end(), d.begin(), d.end());
        it.n_logits = static_cast<int32_t>(1 + d.size());
        n[at[r]]    = static_cast<int32_t>(d.size());
    }
    return n;
}

// A sequence's next draft length follows what it kept: twice the draft when all of it was
// kept (up to the engine's maximum), one more than the kept part otherwise. When nothing was
// kept it drafts one token, and after 2, 3, 4, 5 such misses in a row it first waits 1, 3, 7,
// 15 ticks: a sequence the drafter cannot guess (a sampled stream at a high temperature,
// against greedy drafts) costs a verification row and a draft pass only now and then, while
// one whose drafts are kept (a greedy loop, repeated text) drafts in full again within a few
// ticks. llama-server drafts a fixed n_max (or stops below a draft probability, p_min).
void scheduler::adapt_drafts(seq_state &s, int32_t n_draft, int32_t accepted) {
    const int32_t dmax = engine_.spec_draft_max();
    if (accepted > 0) s.draft_misses = 0;
    if (accepted == n_draft) {
        s.draft_len = std::min(dmax, 2 * std::max(n_draft, 1));
    } else if (accepted > 0) {
        s.draft_len = accepted + 1;
    } else {
        s.draft_len  = 1;
        s.draft_wait = (1u << std::min(s.draft_misses, 4u)) - 1;
        ++s.draft_misses;
    }
}

// Position j of the item holds the logits after [last, d1..dj]: sampled with the sequence's
// own sampler at its counter index (gumbel_sampler.h), it is the token the sequence would
// have sampled there without a draft, as long as d1..dj were its own previous samples. So
// drafts are accepted while the sample equals them, the first differing sample is kept (the
// target's own token), and the stream is the one without speculation. Grammar and penalties
// advance token by token inside sample_at. The memory keeps [last, d1..d_accepted].
void scheduler::verify(int slot, int item, const batch_item &it, int32_t n_draft) {
    auto &s            = slots_[slot].seq;
    const int32_t base = s.n_past;  // the step's own token is in memory
    std::vector<token_id> out;
    for (int32_t j = 0; j <= n_draft; ++j) {
        const token_id t = engine_.sample_at(slot, item, j, s.n_generated + j);
        out.push_back(t);
        if (j == n_draft || t != it.tokens[1 + j]) break;
    }
    const auto accepted = static_cast<int32_t>(out.size()) - 1;
    stats_.spec_drafted += n_draft;
    stats_.spec_accepted += accepted;
    s.drafted += n_draft;
    s.accepted += accepted;
    adapt_drafts(s, n_draft, accepted);
    if (!engine_.seq_trim(slot, base + accepted)) {
        finish(slot, finish_reason::ERROR, "the engine could not drop a rejected draft");
        return;
    }
    s.cells_ahead = accepted > 0;
    for (size_t j = 0; j < out.size(); ++j) {
        if (j > 0) ++s.n_past;  // the accepted draft token out[j-1] is in memory
        on_sampled(slot, out[j]);
        if (!slots_[slot].used) return;  // finished (stop, EOG): finish() cut the rest
    }
    s.cells_ahead = false;
}

}  // namespace sf
