// Prefix reuse across the scheduler's slots (tick thread): which free slot a sequence takes,
// what a free slot's memory still holds (slot::held), and how a new sequence gets its longest
// computed prefix before its first prefill chunk: in place from its own slot's memory, copied
// from another slot, or loaded from the prefix cache (cache/prefix_cache.h).
//
// Why in place: a prompt that extends what its slot computed last (the next turn of a
// conversation, a request sharing a system prompt with the previous one) costs no state copy.
// Through the cache it cost two copies of the whole state (a 3,900-token prompt on the bench
// model: 8 MB saved when the sequence ended, 8 MB loaded when the next began, plus the page
// faults of fresh buffers), which made a cache hit's first token slower than llama-server's,
// whose slots keep their cells.
#include <algorithm>
#include <chrono>

#include "scheduler/scheduler.h"
#include "util/log.h"

namespace sf {

namespace {

// Tokens of a held memory that a sequence continuing in place may cut without keeping them:
// the question and answer after a shared system prompt, an edited last turn. Longer tails are
// another conversation's turns, which its next request will want.
constexpr int32_t k_tail_slack = 256;

}  // namespace

// Tokens of `tokens` (at most max_len) that slot i's held memory gives in place. Attention
// models cut the memory back to any common prefix; recurrent and hybrid ones cannot cut a
// state back, so there the whole held sequence must be a prefix of the new one. A memory of
// another cache scope gives nothing (issue #38).
int32_t scheduler::held_reuse(int i, std::span<const token_id> tokens, int32_t max_len,
                              uint64_t scope) const {
    const auto &held = slots_[i].held;
    if (held.empty() || !opts_.cache || slots_[i].held_scope != scope) return 0;
    const int32_t n = cache::common_prefix(held, tokens, max_len);
    if (opts_.cache->partial()) return n;
    return n == static_cast<int32_t>(held.size()) ? n : 0;
}

// Keeps what slot i's memory holds as a prefix cache entry, then empties the slot's memory
// (only the memory: a sequence placed in the slot may already have its sampler).
void scheduler::release_held(int i) {
    auto &sl = slots_[i];
    if (sl.held.empty()) return;
    if (opts_.cache && worth_retaining(sl.held, sl.held_scope))
        opts_.cache->retain(i, sl.held, sl.held_scope);
    engine_.seq_trim(i, 0);
    sl.held.clear();
}

// Whether a held memory is worth a prefix cache entry of its own. A recurrent or hybrid state
// is saved whole (a 4,000-token prompt on bench-lfm2: 4 MB, plus fresh memory that this VM
// faults in at 3-4 ms per MB, beside the next sequence's first prefill); when the cache
// already holds all of it but less than a quantum (64 tokens: a short question and answer after
// a shared system prompt), it is let go, as a snapshot point that close to the previous one is
// (spaced_snapshot_points). A longer tail, such as an agent's tool call and result, is kept:
// the conversation's next turn would prefill it again.
bool scheduler::worth_retaining(std::span<const token_id> held, uint64_t scope) const {
    if (opts_.cache->partial()) return true;  // retain() itself skips what an entry holds
    const auto n = static_cast<int32_t>(held.size());
    return n - opts_.cache->peek(held, n, {}, scope) >= std::max(opts_.planner.quantum, 1);
}

// The free slot for `next`: the one whose held memory gives it the longest prefix, unless that
// would cut more than k_tail_slack tokens of it and an empty slot is free (the newcomer then
// copies the prefix from it and the memory stays for its own conversation); else an empty
// one; else the one freed longest ago. -1 when every slot is in use.
int scheduler::choose_free_slot(const seq_state &next) const {
    std::vector<token_id> tokens;
    int32_t max_len = 0;
    if (next.parked < 0 && opts_.cache && opts_.cache->enabled()) {
        tokens = next.req.prompt;
        tokens.insert(tokens.end(), next.req.resume_tokens.begin(), next.req.resume_tokens.end());
        if (!tokens.empty())
            max_len = std::min(static_cast<int32_t>(next.req.prompt.size()),
                               static_cast<int32_t>(tokens.size()) - 1);
    }
    int best = -1, empty = -1, oldest = -1;
    int32_t best_n = 0;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        const auto &sl = slots_[i];
        if (sl.used) continue;
        if (sl.held.empty()) {
            if (empty < 0) empty = i;
            continue;
        }
        if (oldest < 0 || sl.held_since < slots_[oldest].held_since) oldest = i;
        if (max_len <= 0) continue;
        const int32_t n = held_reuse(i, tokens, max_len, next.req.cache_scope);
        if (n > best_n) best = i, best_n = n;
    }
    if (best >= 0 &&
        (empty < 0 || static_cast<int32_t>(slots_[best].held.size()) - best_n <= k_tail_slack))
        return best;
    return empty >= 0 ? empty : oldest;
}

// Memories of the other running sequences and of free slots that hold some, as prefix sources
// (attention models): those of slot `except`'s cache scope only.
std::vector<cache::live_source> scheduler::live_sources(int except) const {
    std::vector<cache::live_source> out;
    const uint64_t scope = slots_[except].seq.req.cache_scope;
    for (int j = 0; j < static_cast<int>(slots_.size()); ++j) {
        const auto &o = slots_[j].seq;
        if (j == except) continue;
        if (!slots_[j].used) {
            if (!slots_[j].held.empty() && slots_[j].held_scope == scope)
                out.push_back({j, slots_[j].held});
            continue;
        }
        if (!o.attached || o.n_past <= 0 || o.req.cache_scope != scope) continue;
        out.push_back({j, std::span(o.tokens).first(static_cast<size_t>(o.n_past))});
    }
    return out;
}

// How much of slot i's prompt a sequence still prefilling will have computed later (a shared
// system prompt of requests that arrived together): what waiting for it would gain.
int32_t scheduler::reusable_soon(int i, int32_t max_len) const {
    const auto &s = slots_[i].seq;
    int32_t best  = 0;
    for (int j = 0; j < static_cast<int>(slots_.size()); ++j) {
        const auto &o = slots_[j].seq;
        if (j == i || !slots_[j].used || !o.attached || o.generating ||
            o.req.cache_scope != s.req.cache_scope)
            continue;
        int32_t lcp = cache::common_prefix(
            s.tokens, o.tokens, std::min(max_len, static_cast<int32_t>(o.req.prompt.size())));
        if (!opts_.cache->partial()) {
            // Only its snapshot points are reusable.
            int32_t b = 0;
            for (int32_t p : o.boundaries)
                if (p <= lcp) b = p;
            lcp = b;
        }
        if (lcp > o.n_past) best = std::max(best, lcp);
    }
    return best;
}

// New sequences get their longest cached prefix before their first prefill chunk. One whose
// prompt shares more with a sequence still prefilling than the cache has now waits for it
// (it would compute the same tokens in the same ticks), then shares its result.
void scheduler::attach_new() {
    if (!opts_.cache) return;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        auto &s = slots_[i].seq;
        if (!slots_[i].used || s.attached) continue;
        const int32_t max_len   = reuse_limit(s);
        auto live               = live_sources(i);
        const uint64_t scope    = s.req.cache_scope;
        const int32_t in_place  = held_reuse(i, s.tokens, max_len, scope);
        const int32_t elsewhere = opts_.cache->peek(s.tokens, max_len, live, scope);
        if (reusable_soon(i, max_len) > std::max(in_place, elsewhere)) continue;
        int32_t n = 0;
        // A held memory whose tail this prompt does not share (another conversation's turns)
        // is kept in the cache before the cut: only a short tail (k_tail_slack) is let go.
        if (in_place > 0 && in_place >= elsewhere &&
            static_cast<int32_t>(slots_[i].held.size()) - in_place > k_tail_slack)
            opts_.cache->retain(i, slots_[i].held, slots_[i].held_scope);
        if (in_place > 0 && in_place >= elsewhere &&
            (!opts_.cache->partial() || engine_.seq_trim(i, in_place))) {
            n = in_place;
            slots_[i].held.clear();
            opts_.cache->reused_in_place(i, s.tokens, n, scope);
        } else {
            const auto t0 = std::chrono::steady_clock::now();
            release_held(i);
            n = opts_.cache->attach(i, s.tokens, max_len, live, scope);
            SF_LOG_DEBUG(
                "scheduler", "session %s: attached %d of %zu tokens in %.2f ms",
                s.req.session_id.c_str(), n, s.tokens.size(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count());
        }
        s.n_past   = n;
        s.cached   = n;
        s.attached = true;
        s.pending.erase(s.pending.begin(), s.pending.begin() + n);
        s.boundaries = spaced_snapshot_points(s.boundaries, n, opts_.planner.quantum);
    }
}

// Each snapshot point splits the prefill: one more decode and a state save before the first
// token. A point less than a quantum past the restored prefix or the previous point kept saves
// a later request less than a quantum of prefill, which its own chunk computes nearly for free
// (ggml's CPU flash attention pads a chunk's rows to 64 anyway), while the split costs now:
// a chunk under 64 rows takes the per-row path. Measured on the hybrid bench model, 4,000-token
// shared prefix: a 130-token edit cut at every message end ran as chunks of 63, 47, 18, 1 and
// 1 tokens (105 ms of decode, 13 ms of saves).
std::vector<int32_t> scheduler::spaced_snapshot_points(const std::vector<int32_t> &points,
                                                       int32_t from, int32_t quantum) {
    std::vector<int32_t> out;
    int32_t last = from;
    for (int32_t p : points) {
        if (p - last < std::max(quantum, 1)) continue;
        out.push_back(p);
        last = p;
    }
    return out;
}

}  // namespace sf
