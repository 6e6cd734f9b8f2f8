// The shared KV pool (tick thread; issue #36): every sequence takes cells from one pool as it
// holds tokens (engine_i::kv_cells_total() >= 0), so admission asks for cells, not only for a
// slot, and a tick that would not find cells for its tokens first makes room. Not used when
// each sequence has its own stream reserved whole (kv_cells_total() < 0).
#include <algorithm>

#include "cache/prefix_cache.h"
#include "scheduler/scheduler.h"
#include "util/log.h"

namespace sf {

// Cells `w` takes when placed: a parked sequence its saved state and the token it decodes next;
// a new one its prompt (and resumed tokens) less the longest prefix a placed sequence or a held
// memory already has in the pool (shared cells, seq_share). Prompts the placed sequences have
// not prefilled yet are counted as taken.
bool scheduler::pool_admits(const seq_state &w) const {
    const int64_t total = engine_.kv_cells_total();
    if (total < 0) return true;
    const bool alone =
        std::none_of(slots_.begin(), slots_.end(), [](const slot &s) { return s.used; });
    // A restore that found no run of free cells long enough retries once cells were freed.
    if (w.unpark_retry >= 0 && engine_.kv_cells_used() >= w.unpark_retry && !alone) return false;
    int64_t committed = 0;
    for (const auto &sl : slots_)
        if (sl.used)
            committed += std::max<int64_t>(0, int64_t(sl.seq.tokens.size()) - sl.seq.n_past);
    int64_t need = 0;
    if (w.parked >= 0) {
        need = int64_t(w.n_past) + 1;
    } else {
        std::vector<token_id> tokens = w.req.prompt;
        tokens.insert(tokens.end(), w.req.resume_tokens.begin(), w.req.resume_tokens.end());
        int32_t shared = 0;
        for (const auto &sl : slots_) {
            std::span<const token_id> have;
            if (sl.used && sl.seq.attached)
                have = std::span(sl.seq.tokens).first(size_t(std::max(sl.seq.n_past, 0)));
            else if (!sl.used)
                have = sl.held;
            if (have.empty()) continue;
            shared = std::max(
                shared, cache::common_prefix(tokens, have, static_cast<int32_t>(tokens.size())));
        }
        need = int64_t(tokens.size()) - shared + 1;
    }
    const int64_t free_cells = total - engine_.kv_cells_used() - committed;
    // Held memories of finished sequences give way (pool_room moves them to the prefix cache).
    int64_t held = 0;
    for (const auto &sl : slots_)
        if (!sl.used) held += int64_t(sl.held.size());
    // Nothing else running: it waits for nothing (a request is at most n_ctx_seq() <= the pool).
    return need <= free_cells + held || alone;
}

// Held memories of finished sequences (oldest first, slot `keep` last) go to the prefix cache
// until `w` fits in the free cells (pool_admits counted them as free).
void scheduler::pool_release_for(const seq_state &w, int keep) {
    if (engine_.kv_cells_total() < 0) return;
    const int64_t want = w.parked >= 0 ? int64_t(w.n_past) + 1
                                       : int64_t(w.req.prompt.size() + w.req.resume_tokens.size());
    while (engine_.kv_cells_total() - engine_.kv_cells_used() < want) {
        int oldest = -1;
        for (int i = 0; i < static_cast<int>(slots_.size()); ++i)
            if (i != keep && !slots_[i].used && !slots_[i].held.empty() &&
                (oldest < 0 || slots_[i].held_since < slots_[oldest].held_since))
                oldest = i;
        if (oldest < 0) return;
        release_held(oldest);
    }
}

// The running sequence to park when the pool is short: the least urgent class, then the most
// attained service, then the latest arrival; none that is being sampled off the tick thread.
int scheduler::pick_pool_victim(clock::time_point now) const {
    int victim = -1;
    service_rank most;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        const auto &sl = slots_[i];
        if (!sl.used || sl.seq.sampling) continue;
        const service_rank r = rank(sl.seq, now);
        if (victim >= 0) {
            const auto &v = slots_[victim].seq;
            if (sl.seq.req.cls != v.req.cls) {
                if (sl.seq.req.cls < v.req.cls) continue;
            } else if (r < most || (!(most < r) && sl.seq.arrival < v.arrival)) {
                continue;
            }
        }
        victim = i;
        most   = r;
    }
    return victim;
}

bool scheduler::pool_room(int64_t need, clock::time_point now) {
    const int64_t total = engine_.kv_cells_total();
    if (total < 0) return true;
    while (total - engine_.kv_cells_used() < need) {
        int oldest = -1;
        for (int i = 0; i < static_cast<int>(slots_.size()); ++i)
            if (!slots_[i].used && !slots_[i].held.empty() &&
                (oldest < 0 || slots_[i].held_since < slots_[oldest].held_since))
                oldest = i;
        if (oldest >= 0) {
            release_held(oldest);
            continue;
        }
        const int running = static_cast<int>(
            std::count_if(slots_.begin(), slots_.end(), [](const slot &s) { return s.used; }));
        const int v = running > 1 ? pick_pool_victim(now) : -1;
        if (v < 0) return true;  // the decode fails apart (scheduler_decode.cpp)
        static const seq_state pool_pressure{};
        SF_LOG_DEBUG("scheduler", "KV pool full (%lld of %lld cells, %lld wanted): parking slot %d",
                     static_cast<long long>(engine_.kv_cells_used()), static_cast<long long>(total),
                     static_cast<long long>(need), v);
        if (!park(v, pool_pressure, now)) return true;
        return false;
    }
    return true;
}

}  // namespace sf
