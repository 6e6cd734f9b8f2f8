#include "scheduler/scheduler.h"

#include <algorithm>
#include <future>

#include "util/log.h"

namespace sf {

scheduler::scheduler(engine_i &engine, scheduler_options opts)
    : engine_(engine), opts_(opts), slots_(engine.n_seq_max()), ledger_(opts.service) {
    opts_.planner.budget = std::min(opts_.planner.budget, engine.n_batch());
    const int32_t cap =
        opts_.planner.prefill_budget > 0 ? opts_.planner.prefill_budget : opts_.planner.budget;
    opts_.planner.prefill_budget = std::min(cap, opts_.planner.budget);
    prefill_budget_              = opts_.planner.prefill_budget;
    if (opts_.interrupt_ticks) engine_.set_interrupt(&interrupt_);
    engine_.on_deferred_ready([this] {
        {
            std::lock_guard lk(mu_);
            deferred_ready_ = true;
        }
        cv_.notify_one();
    });
}

// Proportional control of the prompt tokens per tick: the prompt part of the tick just
// measured (its time less its decode steps at their measured cost) scaled to the target,
// averaged with the current value (one slow tick does not halve it), in multiples of the
// planner's quantum, between one quantum and the configured cap. Prompt cost grows with
// context length (attention), so the value follows the prompts as they grow. Decode steps are
// not budgeted: every generating sequence gets its token each tick. The same estimate without
// the floor (prefill_fit_) caps lower classes' prompt tokens in an interactive sequence's ticks.
void scheduler::adapt_prefill_budget(int32_t prefill_tokens, int32_t decode_steps, double tick_ms) {
    const int32_t q = std::max(opts_.planner.quantum, 1);
    if (opts_.tick_ms <= 0 || tick_ms <= 0) return;
    if (prefill_tokens == 0 && decode_steps > 0) {
        const double per_step = tick_ms / decode_steps;
        decode_step_ms_ = decode_step_ms_ > 0 ? 0.8 * decode_step_ms_ + 0.2 * per_step : per_step;
        return;
    }
    if (prefill_tokens < q) return;
    const double prompt_ms = std::max(tick_ms - decode_steps * decode_step_ms_, 0.2 * tick_ms);
    const double fit       = prefill_tokens * (opts_.tick_ms / prompt_ms);
    const auto next        = static_cast<int32_t>(0.5 * prefill_budget_ + 0.5 * fit);
    prefill_fit_           = prefill_fit_ < 0 ? fit : 0.5 * prefill_fit_ + 0.5 * fit;
    const int32_t lo =
        std::min(std::max(opts_.min_prefill / q * q, q), opts_.planner.prefill_budget);
    prefill_budget_ = std::clamp(next / q * q, lo, opts_.planner.prefill_budget);
}

scheduler::~scheduler() {
    stop();
    engine_.on_deferred_ready(nullptr);
    if (opts_.interrupt_ticks) engine_.set_interrupt(nullptr);
}

bool scheduler::submit(sequence_request req) {
    {
        std::lock_guard lk(mu_);
        const int c = static_cast<int>(req.cls);
        if (stats_.waiting_by_class[c] >= opts_.max_waiting) return false;
        seq_state s;
        s.req            = std::move(req);
        s.arrival        = ++arrivals_;
        s.last_served_at = now();
        // The decode in flight has no interactive work: it stops, and this request is
        // planned in the next tick (scheduler_options::interrupt_ticks).
        if (s.req.cls == priority_class::INTERACTIVE && plain_decode_.load())
            interrupt_.store(true);
        waiting_.push_back(std::move(s));
        // Only the waiting counts: slots_ belong to the tick thread (scheduler.h), which
        // refreshes the running counts itself.
        stats_.waiting_by_class[c]++;
        stats_.waiting++;
    }
    cv_.notify_one();
    return true;
}

void scheduler::start() {
    std::promise<void> warm;
    auto warmed = warm.get_future();
    thread_     = std::thread([this, &warm] {
        try {
            engine_.warm_up();
        } catch (const std::exception &e) {
            // Only a slower first request: never a worker that does not start.
            SF_LOG_WARN("scheduler", "the engine's warm-up failed: %s", e.what());
        }
        warm.set_value();
        run();
    });
    warmed.wait();
}

void scheduler::stop() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

scheduler_stats scheduler::stats() const {
    std::lock_guard lk(mu_);
    return stats_;
}

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

void scheduler::update_counts_locked() {
    stats_.running_by_class = {};
    stats_.waiting_by_class = {};
    int64_t kv              = 0;
    for (const auto &sl : slots_) {
        if (!sl.used) continue;
        stats_.running_by_class[static_cast<int>(sl.seq.req.cls)]++;
        kv += sl.seq.n_past;
    }
    for (const auto &w : waiting_) stats_.waiting_by_class[static_cast<int>(w.req.cls)]++;
    stats_.active =
        stats_.running_by_class[0] + stats_.running_by_class[1] + stats_.running_by_class[2];
    stats_.waiting = static_cast<int32_t>(waiting_.size());
    stats_.kv_used = kv;
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
        bool ok  = engine_.seq_unpark(q.parked, i);
        q.parked = -1;
        if (!ok) {
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

// Parks slot v's sequence into the waiting queue (mu_ held). False when the engine cannot.
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

void scheduler::admit_locked(clock::time_point now) {
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
        int free_slot = choose_free_slot(waiting_.front());
        if (free_slot < 0) {
            // A less urgent class first; else, within the class, the most-served sequence.
            int v = pick_victim(aged(waiting_.front(), now));
            if (v < 0) v = pick_fair_victim(waiting_.front(), now);
            if (v < 0 || !park(v, waiting_.front(), now)) break;
            free_slot = v;
        }
        seq_state next = std::move(waiting_.front());
        waiting_.pop_front();
        place(free_slot, std::move(next));
    }
    update_counts_locked();
}

void scheduler::finish_waiting(seq_state &s, finish_reason reason) {
    session_event ev;
    ev.type              = session_event::kind::FINISHED;
    ev.reason            = reason;
    ev.prompt_tokens     = static_cast<int32_t>(s.req.prompt.size());
    ev.completion_tokens = static_cast<int32_t>(s.n_generated);
    ev.cached_tokens     = s.cached;
    s.req.channel->push(std::move(ev));
    if (s.parked >= 0) {
        engine_.seq_drop_parked(s.parked);
        s.parked = -1;
    }
}

void scheduler::drop_cancelled() {
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        if (slots_[i].used && slots_[i].seq.req.channel->cancelled())
            finish(i, finish_reason::CANCELLED);
    }
    std::lock_guard lk(mu_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        if (it->req.channel->cancelled()) {
            finish_waiting(*it, finish_reason::CANCELLED);
            it = waiting_.erase(it);
        } else {
            ++it;
        }
    }
    update_counts_locked();
}

void scheduler::finish(int slot, finish_reason reason, std::string error) {
    auto &s = slots_[slot].seq;
    session_event ev;
    ev.type   = session_event::kind::FINISHED;
    ev.reason = reason;
    ev.error  = std::move(error);
    if (reason != finish_reason::CANCELLED && reason != finish_reason::ERROR && s.text &&
        !s.text->stopped()) {
        ev.text = s.text->flush();  // nothing more can complete a stop string
    }
    ev.stop_string       = s.text && s.text->stopped() ? s.text->matched_stop() : "";
    ev.prompt_tokens     = static_cast<int32_t>(s.req.prompt.size());
    ev.completion_tokens = static_cast<int32_t>(s.n_generated);
    ev.cached_tokens     = s.cached;
    ev.draft_tokens      = s.drafted;
    ev.draft_accepted    = s.accepted;
    s.req.channel->push(std::move(ev));
    // Verified draft cells past the tokens handed out so far are not part of the sequence.
    if (s.cells_ahead) engine_.seq_trim(slot, s.n_past);
    // What the sequence computed stays reusable: the next turn of a conversation extends it.
    // The slot keeps it in the engine's memory (slot::held) until another sequence needs it.
    // After an error only the prefix it was given is trusted (a failed decode leaves no cells,
    // but what it reused from the cache must outlive it, as a cache entry would).
    int32_t keep = 0;
    if (opts_.cache && opts_.cache->enabled() && s.attached)
        keep = reason == finish_reason::ERROR ? std::min(s.cached, s.n_past) : s.n_past;
    if (keep > 0 && keep < s.n_past && (!opts_.cache->partial() || !engine_.seq_trim(slot, keep)))
        keep = 0;
    if (keep > 0) {
        slots_[slot].held.assign(s.tokens.begin(), s.tokens.begin() + keep);
        slots_[slot].held_since = tick_no_;
        slots_[slot].held_scope = s.req.cache_scope;
    } else {
        release_held(slot);  // a sequence that ended before it attached
        engine_.seq_end(slot);
    }
    slots_[slot].used = false;
    slots_[slot].seq  = seq_state{};
    // Counts are refreshed once per loop iteration (run()); no lock taken here, so this may be
    // called from admission, which holds mu_.
}

void scheduler::on_sampled(int slot, token_id t) {
    auto &s = slots_[slot].seq;
    s.tokens.push_back(t);
    if (engine_.is_eog(t) && !s.req.sampling.ignore_eos) {
        finish(slot, finish_reason::STOP);
        return;
    }
    session_event ev;
    ev.index = s.n_generated++;
    ev.token = t;
    ev.piece = engine_.token_piece(t);
    ev.text  = s.text->push(ev.piece);
    // The first token tells the head how much of the prompt the cache supplied, so APIs
    // that report usage before the answer ends (Anthropic's message_start) can be exact.
    if (ev.index == 0) ev.cached_tokens = s.cached;
    bool stopped = s.text->stopped();
    s.req.channel->push(std::move(ev));
    {
        std::lock_guard lk(mu_);
        stats_.generated_tokens++;
    }
    if (stopped) {
        finish(slot, finish_reason::STOP);
    } else if (static_cast<int32_t>(s.n_generated) >= s.req.sampling.max_tokens ||
               s.n_past + 1 >= engine_.n_ctx_seq()) {
        finish(slot, finish_reason::LENGTH);
    } else {
        s.pending.assign(1, t);
        s.generating = true;
    }
}

// One tick: plan, decode, sample. Returns false when there was nothing to do.
bool scheduler::tick() {
    const auto now = this->now();
    collect_deferred();
    attach_new();
    std::vector<plan_input> in;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        const auto &sl = slots_[i];
        if (!sl.used || !sl.seq.attached || sl.seq.sampling) continue;
        const auto &s = sl.seq;
        // A resumed session's already-generated tokens are prefilled after its prompt, in
        // ordinary chunks (issue #37: replayed one per decode step, the pause after a loss grew
        // with the answer, ~5 s after 200 tokens). Batched and single-token kernels round
        // differently, so a continuation can differ from the uninterrupted run where two
        // candidates nearly tie (README, "Journal and resumable sessions").
        int32_t pending           = static_cast<int32_t>(s.pending.size());
        const bool one_by_one     = s.generating;
        const int32_t prompt_left = static_cast<int32_t>(s.req.prompt.size()) - s.n_past;
        if (!one_by_one && prompt_left > 0 && pending > prompt_left)
            pending = prompt_left;  // the prompt part first: its snapshot points are in it
        // A chunk ends at the next snapshot point, so the state there can be saved.
        if (!one_by_one && !s.boundaries.empty())
            pending = std::min(pending, s.boundaries.front() - s.n_past);
        in.push_back(
            {i, aged(s, now), pending, one_by_one, s.last_served, s.arrival, rank(s, now)});
    }
    planner_options po = opts_.planner;
    po.prefill_budget  = prefill_budget_;
    po.min_share       = opts_.service.min_share;
    // An interactive sequence's ticks keep to the tick-time target: lower classes' prompt
    // tokens only as far as whole quanta fit in it (none on a slow model).
    const int32_t q = std::max(po.quantum, 1);
    po.interactive_tick_prefill =
        prefill_fit_ < 0 ? -1 : static_cast<int32_t>(prefill_fit_) / q * q;
    auto plan = plan_tick(in, po);
    if (plan.empty()) return false;

    ++tick_no_;
    std::vector<batch_item> items;
    items.reserve(plan.size());
    int32_t n_prompt = 0, n_steps = 0;
    for (const auto &e : plan) {
        auto &s = slots_[e.slot].seq;
        batch_item it;
        it.seq = e.slot;
        it.tokens.assign(s.pending.begin(), s.pending.begin() + e.n_tokens);
        it.pos         = s.n_past;
        it.want_logits = e.n_tokens == static_cast<int32_t>(s.pending.size());
        if (!s.generating)
            n_prompt += e.n_tokens;
        else
            n_steps += e.n_tokens;
        items.push_back(std::move(it));
    }
    const auto drafts = add_drafts(plan, items);
    for (int32_t d : drafts) n_steps += d;
    const auto started = this->now();
    const bool plain   = std::none_of(in.begin(), in.end(), [&](const plan_input &p) {
        return p.cls == priority_class::INTERACTIVE &&
               std::any_of(plan.begin(), plan.end(),
                             [&](const plan_entry &e) { return e.slot == p.slot; });
    });
    interrupt_.store(false);  // a late arrival's flag from the last decode is stale
    plain_decode_.store(plain && opts_.interrupt_ticks);
    int rc = engine_.decode(items);
    plain_decode_.store(false);
    if (interrupt_.exchange(false) && rc == k_decode_interrupted) {
        // Nothing of the tick happened (the engine took the batch back): the sequences plan
        // the same tokens again, after the interactive newcomer is admitted.
        std::lock_guard lk(mu_);
        stats_.interrupted_ticks++;
        return true;
    }
    const double decode_ms =
        std::chrono::duration<double, std::milli>(this->now() - started).count();
    adapt_prefill_budget(n_prompt, n_steps, decode_ms);
    SF_LOG_DEBUG("scheduler", "tick %llu: %zu sequences, %d prompt tokens, %d steps, %.2f ms",
                 static_cast<unsigned long long>(tick_no_), plan.size(), n_prompt, n_steps,
                 decode_ms);
    {
        std::lock_guard lk(mu_);
        stats_.ticks++;
        if (plan.size() > 1) stats_.batched_ticks++;
        stats_.last_sequences_per_tick = static_cast<int32_t>(plan.size());
        stats_.max_sequences_per_tick =
            std::max(stats_.max_sequences_per_tick, static_cast<int32_t>(plan.size()));
        stats_.prompt_tokens += n_prompt;
    }
    if (rc != 0) {
        SF_LOG_ERROR("scheduler", "decode failed (%d) for a batch of %zu sequences", rc,
                     plan.size());
        decode_apart(plan, items, drafts);
        return true;
    }
    settle(plan, items, drafts);
    return true;
}

bool scheduler::step() {
    drop_cancelled();
    {
        std::lock_guard lk(mu_);
        admit_locked(now());
    }
    const bool ticked = tick();
    last_idle_        = !ticked;
    if (opts_.on_tick_end) opts_.on_tick_end();
    std::lock_guard lk(mu_);
    update_counts_locked();
    return ticked;
}

void scheduler::run() {
    for (;;) {
        {
            std::unique_lock lk(mu_);
            bool busy =
                std::any_of(slots_.begin(), slots_.end(), [](const slot &s) { return s.used; });
            if (!busy) cv_.wait(lk, [&] { return stopping_ || !waiting_.empty(); });
            // Nothing to plan but tokens being sampled off the tick thread: wait for one of
            // them or a newcomer, looking for cancellations every 20 ms.
            const bool only_sampling =
                last_idle_ && std::any_of(slots_.begin(), slots_.end(),
                                          [](const slot &s) { return s.used && s.seq.sampling; });
            if (busy && only_sampling) {
                const uint64_t seen = arrivals_;
                cv_.wait_for(lk, std::chrono::milliseconds(20),
                             [&] { return stopping_ || deferred_ready_ || arrivals_ != seen; });
            }
            if (stopping_) break;
        }
        step();
    }
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        if (slots_[i].used) finish(i, finish_reason::CANCELLED);
    }
    std::lock_guard lk(mu_);
    for (auto &w : waiting_) finish_waiting(w, finish_reason::CANCELLED);
    waiting_.clear();
    if (opts_.on_tick_end) opts_.on_tick_end();
}

}  // namespace sf
