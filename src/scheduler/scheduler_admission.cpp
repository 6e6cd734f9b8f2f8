// Admission (tick thread): which waiting sessions enter which slots, which running sequence
// is parked to make room, and setting a placed sequence up in the engine. Nothing here runs
// under scheduler::mu_: submit() never waits behind a park's copy or a sampler's setup.
#include <algorithm>

#include "scheduler/scheduler.h"
#include "util/log.h"

namespace sf {

// Class after aging: one step more urgent per aging_ms since the sequence was last served.
priority_class scheduler::aged(const seq_state &s, clock::time_point now) const {
    int c = static_cast<int>(s.req.cls);
    if (opts_.aging_ms > 0) {
        auto waited =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - s.last_served_at).count();
        c -= static_cast<int>(std::min<int64_t>(waited / opts_.aging_ms, k_classes));
    }
    return static_cast<priority_class>(std::max(c, 0));
}

// Puts a waiting sequence (new or parked) into a free slot.
void scheduler::place(int i, seq_state &&s) {
    auto &sl         = slots_[i];
    sl.used          = true;
    sl.seq           = std::move(s);
    auto &q          = sl.seq;
    q.served_in_slot = 0;
    if (q.parked >= 0) {
        release_held(i);
        const int64_t handle = q.parked;
        bool ok              = engine_.seq_unpark(handle, i);
        if (!ok && engine_.kv_cells_total() >= 0) {
            // The pool has no run of free cells that long yet: it waits again, parked, until
            // some are freed (pool_admits).
            q.unpark_retry = engine_.kv_cells_used();
            sl.used        = false;
            waiting_.push_back(std::move(q));
            sl.seq = seq_state{};
            return;
        }
        q.parked       = -1;
        q.unpark_retry = -1;
        if (!ok) {
            engine_.seq_drop_parked(handle);
            SF_LOG_ERROR("scheduler", "session %s: cannot restore its parked state",
                         q.req.session_id.c_str());
            finish(i, finish_reason::ERROR, "the engine could not restore the preempted sequence");
        }
        return;
    }
    q.pending = q.req.prompt;
    q.pending.insert(q.pending.end(), q.req.resume_tokens.begin(), q.req.resume_tokens.end());
    q.tokens   = q.pending;
    q.attached = opts_.cache == nullptr || !opts_.cache->enabled();
    // What the slot's memory holds stays for attach_new only when this sequence can use it.
    if (!sl.held.empty() && held_reuse(i, q.tokens, reuse_limit(q), q.req.cache_scope) == 0)
        release_held(i);
    if (!q.attached && !opts_.cache->partial()) {
        // Snapshot points: message ends, and the prompt but its last token (an identical
        // prompt then reuses all it can: the last token is decoded for its logits anyway);
        // attach_new keeps those spaced at least a quantum apart (spaced_snapshot_points).
        const auto n_prompt = static_cast<int32_t>(q.req.prompt.size());
        for (int32_t b : q.req.boundaries)
            if (b > 0 && b < n_prompt - 1) q.boundaries.push_back(b);
        if (n_prompt > 1) q.boundaries.push_back(n_prompt - 1);
    }
    q.text.emplace(q.req.stops);
    // A resumed session: rebuild the text state from the tokens already delivered.
    for (token_id t : q.req.resume_tokens) q.text->push(engine_.token_piece(t));
    q.n_generated = static_cast<uint32_t>(q.req.resume_tokens.size());
    q.started     = true;
    // Its wait for prompt service starts now: a newcomer is not "least recently served" ahead of
    // a prompt that has waited (the planner's reserved share goes to the longest wait).
    q.last_served = tick_no_;
    if (q.req.sampler) engine_.seq_use_prepared(i, std::move(q.req.sampler));
    if (!engine_.seq_start(i, q.req.sampling, q.pending, q.req.resume_tokens.size())) {
        finish(i, finish_reason::ERROR,
               "the engine could not set up the sequence's sampler (see the worker's log)");
    }
}

// The running slot to park for a waiting session of class `c`: the least urgent one that is
// strictly less urgent than `c` (latest arrival among equals), or -1.
int scheduler::pick_victim(priority_class c) const {
    int victim = -1;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        const auto &sl = slots_[i];
        if (!sl.used || sl.seq.req.cls <= c || sl.seq.sampling) continue;
        if (victim < 0 || sl.seq.req.cls > slots_[victim].seq.req.cls ||
            (sl.seq.req.cls == slots_[victim].seq.req.cls &&
             sl.seq.arrival > slots_[victim].seq.arrival)) {
            victim = i;
        }
    }
    return victim;
}

const std::string &scheduler::client_of(const seq_state &s) const {
    return s.req.client.empty() ? s.req.session_id : s.req.client;
}

service_rank scheduler::rank(const seq_state &s, clock::time_point now) const {
    return ledger_.rank(s.service, client_of(s), now);
}

// For a newcomer (never placed) with no free slot and no less urgent class running: the running
// sequence of its class with the most attained service that ranks after the newcomer and has
// had its quantum of service since it was placed, or, never parked yet, has a prompt of at least
// a quantum (known to be long from the start, as FastServe's skip-join places it) while its
// state is still under a quantum (parking copies it: a prompt mostly from the prefix cache is
// not parked early); else -1.
int scheduler::pick_fair_victim(const seq_state &w, clock::time_point now) const {
    if (w.started || w.parked >= 0) return -1;
    const service_rank mine = rank(w, now);
    int victim              = -1;
    service_rank most;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        const auto &sl = slots_[i];
        if (!sl.used || sl.seq.req.cls != w.req.cls || sl.seq.sampling) continue;
        const int64_t q       = opts_.service.quantum;
        const auto &s         = sl.seq;
        const bool skip_joins = s.parks == 0 && static_cast<int64_t>(s.req.prompt.size()) >= q &&
                                s.n_past < q;  // long prompt, small state (no big cache hit)
        if (s.served_in_slot < q && !skip_joins) continue;
        const service_rank r = rank(sl.seq, now);
        if (!(mine < r)) continue;
        if (victim < 0 || most < r) {
            victim = i;
            most   = r;
        }
    }
    return victim;
}

// Parks slot v's sequence into the waiting queue. False when the engine cannot.
bool scheduler::park(int v, const seq_state &for_whom, clock::time_point now) {
    if (!slots_[v].seq.attached) release_held(v);  // its state is then exactly n_past = 0
    seq_state parked = std::move(slots_[v].seq);
    parked.parked    = engine_.seq_park(v);
    if (parked.parked < 0) {
        slots_[v].seq = std::move(parked);  // cannot park it: leave it running
        return false;
    }
    SF_LOG_DEBUG("scheduler", "preempted session %s (class %d) for %s",
                 parked.req.session_id.c_str(), static_cast<int>(parked.req.cls),
                 for_whom.req.session_id.c_str());
    stats_.preemptions++;
    stats_.preemptions_by_class[static_cast<int>(parked.req.cls)]++;
    parked.last_served_at = now;  // its wait for a slot starts now
    parked.parks++;
    slots_[v].used = false;
    slots_[v].seq  = seq_state{};
    waiting_.push_back(std::move(parked));
    return true;
}

void scheduler::admit(clock::time_point now) {
    // By aged class, then least attained service (a newcomer before a parked sequence of the
    // same client; a light client's newcomer before a heavy one's), then arrival.
    for (auto &w : waiting_) w.queue_rank = rank(w, now);
    std::stable_sort(waiting_.begin(), waiting_.end(), [&](const seq_state &a, const seq_state &b) {
        auto ca = aged(a, now), cb = aged(b, now);
        if (ca != cb) return ca < cb;
        if (a.queue_rank < b.queue_rank || b.queue_rank < a.queue_rank)
            return a.queue_rank < b.queue_rank;
        return a.arrival < b.arrival;
    });
    while (!waiting_.empty()) {
        // A shared KV pool: the front waits until its tokens fit, unless a less urgent class
        // runs, whose sequence is parked for it (its cells freed) as for a slot.
        if (!pool_admits(waiting_.front())) {
            const int v = pick_victim(aged(waiting_.front(), now));
            if (v < 0 || !park(v, waiting_.front(), now)) break;
            continue;
        }
        int free_slot = choose_free_slot(waiting_.front());
        if (free_slot < 0) {
            // A less urgent class first; else, within the class, the most-served sequence.
            int v = pick_victim(aged(waiting_.front(), now));
            if (v < 0) v = pick_fair_victim(waiting_.front(), now);
            if (v < 0 || !park(v, waiting_.front(), now)) break;
            free_slot = v;
        }
        pool_release_for(waiting_.front(), free_slot);
        seq_state next = std::move(waiting_.front());
        waiting_.pop_front();
        place(free_slot, std::move(next));
    }
}

}  // namespace sf
