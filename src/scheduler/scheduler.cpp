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
    // The KV size is known before the first tick (the cluster's Health reports it at once).
    const int64_t pool = engine_.kv_cells_total();
    stats_.kv_total =
        pool >= 0 ? pool : int64_t(engine_.n_ctx_seq()) * int64_t(engine_.n_seq_max());
    published_ = stats_;
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
        // The published count (as of the tick thread's last step) plus what arrived since.
        if (published_.waiting_by_class[c] + inbox_by_class_[c] >= opts_.max_waiting) return false;
        seq_state s;
        s.req            = std::move(req);
        s.arrival        = ++arrivals_;
        s.last_served_at = now();
        // The decode in flight has no interactive work: it stops, and this request is
        // planned in the next tick (scheduler_options::interrupt_ticks).
        if (s.req.cls == priority_class::INTERACTIVE && plain_decode_.load())
            interrupt_.store(true);
        inbox_.push_back(std::move(s));
        inbox_by_class_[c]++;
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
    scheduler_stats out = published_;
    for (int c = 0; c < k_classes; ++c) out.waiting_by_class[c] += inbox_by_class_[c];
    out.waiting += static_cast<int32_t>(inbox_.size());
    return out;
}

void scheduler::drain_inbox() {
    std::deque<seq_state> arrived;
    {
        std::lock_guard lk(mu_);
        arrived.swap(inbox_);
        // They wait now: counted in the published snapshot at once, so submit's per-class limit
        // and stats() see them until the next publish (admission may park for a while first).
        for (int c = 0; c < k_classes; ++c) published_.waiting_by_class[c] += inbox_by_class_[c];
        published_.waiting += static_cast<int32_t>(arrived.size());
        inbox_by_class_ = {};
    }
    for (auto &s : arrived) waiting_.push_back(std::move(s));
}

void scheduler::publish_stats() {
    update_counts();
    std::lock_guard lk(mu_);
    published_ = stats_;
}

void scheduler::update_counts() {
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
    // A shared pool counts its cells: a prefix several sequences share once, held ones too.
    const int64_t pool = engine_.kv_cells_total();
    stats_.kv_used     = pool >= 0 ? engine_.kv_cells_used() : kv;
    stats_.kv_total =
        pool >= 0 ? pool : int64_t(engine_.n_ctx_seq()) * int64_t(engine_.n_seq_max());
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
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        if (it->req.channel->cancelled()) {
            finish_waiting(*it, finish_reason::CANCELLED);
            it = waiting_.erase(it);
        } else {
            ++it;
        }
    }
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
    // Counts are refreshed once per loop iteration (publish_stats).
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
    stats_.generated_tokens++;
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

// The tick's plan: what each placed sequence could decode now (plan_input), then plan_tick.
std::vector<plan_input> scheduler::plan_inputs(clock::time_point now) const {
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
    return in;
}

planner_options scheduler::tick_planner_options() const {
    planner_options po = opts_.planner;
    po.prefill_budget  = prefill_budget_;
    po.min_share       = opts_.service.min_share;
    // An interactive sequence's ticks keep to the tick-time target: lower classes' prompt
    // tokens only as far as whole quanta fit in it (none on a slow model).
    const int32_t q = std::max(po.quantum, 1);
    po.interactive_tick_prefill =
        prefill_fit_ < 0 ? -1 : static_cast<int32_t>(prefill_fit_) / q * q;
    return po;
}

// The tick's batch: each planned entry's tokens at its position, logits where its pending
// tokens end, and speculative drafts on top of decode steps.
scheduler::tick_batch scheduler::build_batch(const std::vector<plan_entry> &plan) {
    tick_batch b;
    b.items.reserve(plan.size());
    for (const auto &e : plan) {
        auto &s = slots_[e.slot].seq;
        batch_item it;
        it.seq = e.slot;
        it.tokens.assign(s.pending.begin(), s.pending.begin() + e.n_tokens);
        it.pos         = s.n_past;
        it.want_logits = e.n_tokens == static_cast<int32_t>(s.pending.size());
        if (!s.generating)
            b.n_prompt += e.n_tokens;
        else
            b.n_steps += e.n_tokens;
        b.items.push_back(std::move(it));
    }
    b.drafts = add_drafts(plan, b.items);
    for (int32_t d : b.drafts) b.n_steps += d;
    return b;
}

// One tick: plan, batch, decode, results. Returns false when there was nothing to do.
bool scheduler::tick() {
    const auto now = this->now();
    collect_deferred();
    attach_new();
    const auto in   = plan_inputs(now);
    const auto plan = plan_tick(in, tick_planner_options());
    if (plan.empty()) return false;

    ++tick_no_;
    auto batch = build_batch(plan);
    if (!pool_room(int64_t(batch.n_prompt) + batch.n_steps, now))
        return true;  // a sequence was parked for room: plan again (drafts are in n_steps)
    const auto started = this->now();
    const bool plain   = std::none_of(in.begin(), in.end(), [&](const plan_input &p) {
        return p.cls == priority_class::INTERACTIVE &&
               std::any_of(plan.begin(), plan.end(),
                             [&](const plan_entry &e) { return e.slot == p.slot; });
    });
    interrupt_.store(false);  // a late arrival's flag from the last decode is stale
    plain_decode_.store(plain && opts_.interrupt_ticks);
    int rc = engine_.decode(batch.items);
    plain_decode_.store(false);
    if (interrupt_.exchange(false) && rc == k_decode_interrupted) {
        // Nothing of the tick happened (the engine took the batch back): the sequences plan
        // the same tokens again, after the interactive newcomer is admitted.
        stats_.interrupted_ticks++;
        return true;
    }
    const double decode_ms =
        std::chrono::duration<double, std::milli>(this->now() - started).count();
    adapt_prefill_budget(batch.n_prompt, batch.n_steps, decode_ms);
    SF_LOG_DEBUG("scheduler", "tick %llu: %zu sequences, %d prompt tokens, %d steps, %.2f ms",
                 static_cast<unsigned long long>(tick_no_), plan.size(), batch.n_prompt,
                 batch.n_steps, decode_ms);
    results(plan, batch, rc);
    return true;
}

// After the decode: counters, then the sequences advance and sample (settle) or, after a
// failed decode, are decoded apart so only the one that fails ends.
void scheduler::results(const std::vector<plan_entry> &plan, const tick_batch &batch, int rc) {
    stats_.ticks++;
    if (plan.size() > 1) stats_.batched_ticks++;
    stats_.last_sequences_per_tick = static_cast<int32_t>(plan.size());
    stats_.max_sequences_per_tick =
        std::max(stats_.max_sequences_per_tick, static_cast<int32_t>(plan.size()));
    stats_.prompt_tokens += batch.n_prompt;
    if (rc != 0) {
        SF_LOG_ERROR("scheduler", "decode failed (%d) for a batch of %zu sequences", rc,
                     plan.size());
        decode_apart(plan, batch.items, batch.drafts);
        return;
    }
    settle(plan, batch.items, batch.drafts);
}

bool scheduler::step() {
    drain_inbox();
    drop_cancelled();
    admit(now());
    // Published before the decode too: during a long tick (a prefill) the sessions just placed
    // are seen running, not neither waiting nor running (the standby's busy check reads them).
    publish_stats();
    const bool ticked = tick();
    last_idle_        = !ticked;
    // Published before the tick's events leave (on_tick_end flushes them): a client that has
    // its last token reads counts that include it (clients.openai compares
    // generation_tokens_total with the usage it was sent).
    publish_stats();
    if (opts_.on_tick_end) opts_.on_tick_end();
    return ticked;
}

void scheduler::run() {
    for (;;) {
        {
            std::unique_lock lk(mu_);
            bool busy =
                std::any_of(slots_.begin(), slots_.end(), [](const slot &s) { return s.used; });
            if (!busy && waiting_.empty())
                cv_.wait(lk, [&] { return stopping_ || !inbox_.empty(); });
            // Nothing to plan but tokens being sampled off the tick thread: wait for one of
            // them or a newcomer, looking for cancellations every 20 ms.
            const bool only_sampling =
                last_idle_ && std::any_of(slots_.begin(), slots_.end(),
                                          [](const slot &s) { return s.used && s.seq.sampling; });
            if (busy && only_sampling) {
                cv_.wait_for(lk, std::chrono::milliseconds(20),
                             [&] { return stopping_ || deferred_ready_ || !inbox_.empty(); });
            }
            if (stopping_) break;
        }
        step();
    }
    drain_inbox();
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        if (slots_[i].used) finish(i, finish_reason::CANCELLED);
    }
    for (auto &w : waiting_) finish_waiting(w, finish_reason::CANCELLED);
    waiting_.clear();
    if (opts_.on_tick_end) opts_.on_tick_end();
    publish_stats();
}

}  // namespace sf
