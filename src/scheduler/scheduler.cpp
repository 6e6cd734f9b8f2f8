#include "scheduler/scheduler.h"

#include <algorithm>

#include "util/log.h"

namespace sf {

scheduler::scheduler(engine_i &engine, planner_options opts)
    : engine_(engine), opts_(opts), slots_(engine.n_seq_max()) {
    opts_.budget = std::min(opts_.budget, engine.n_batch());
}

scheduler::~scheduler() {
    stop();
}

void scheduler::submit(sequence_request req) {
    {
        std::lock_guard lk(mu_);
        waiting_.push_back(std::move(req));
        stats_.waiting = static_cast<int32_t>(waiting_.size());
    }
    cv_.notify_one();
}

void scheduler::start() {
    thread_ = std::thread([this] { run(); });
}

void scheduler::stop() {
    {
        std::lock_guard lk(mu_);
        if (stopping_ && !thread_.joinable()) return;
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

scheduler_stats scheduler::stats() const {
    std::lock_guard lk(mu_);
    return stats_;
}

// Moves waiting sessions into free slots, most urgent class first, FIFO within a class.
void scheduler::admit_locked() {
    std::stable_sort(
        waiting_.begin(), waiting_.end(),
        [](const sequence_request &a, const sequence_request &b) { return a.cls < b.cls; });
    for (int i = 0; i < static_cast<int>(slots_.size()) && !waiting_.empty(); ++i) {
        if (slots_[i].used) continue;
        auto &s = slots_[i];
        s       = slot_state{};
        s.used  = true;
        s.req   = std::move(waiting_.front());
        waiting_.pop_front();
        s.arrival = ++arrivals_;
        s.pending = s.req.prompt;
        s.pending.insert(s.pending.end(), s.req.resume_tokens.begin(), s.req.resume_tokens.end());
        s.text.emplace(s.req.stops);
        // A resumed session: rebuild the text state from the tokens already delivered.
        for (token_id t : s.req.resume_tokens) s.text->push(engine_.token_piece(t));
        s.n_generated = static_cast<uint32_t>(s.req.resume_tokens.size());
        engine_.seq_start(i, s.req.sampling, s.pending);
    }
    stats_.waiting = static_cast<int32_t>(waiting_.size());
}

void scheduler::drop_cancelled() {
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        if (slots_[i].used && slots_[i].req.channel->cancelled())
            finish(i, finish_reason::CANCELLED);
    }
    std::lock_guard lk(mu_);
    auto gone = [](const sequence_request &r) { return r.channel->cancelled(); };
    waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), gone), waiting_.end());
}

void scheduler::finish(int slot, finish_reason reason, std::string error) {
    auto &s = slots_[slot];
    session_event ev;
    ev.type   = session_event::kind::FINISHED;
    ev.reason = reason;
    ev.error  = std::move(error);
    if (reason != finish_reason::CANCELLED && reason != finish_reason::ERROR &&
        !s.text->stopped()) {
        ev.text = s.text->flush();  // nothing more can complete a stop string
    }
    ev.stop_string       = s.text->stopped() ? s.text->matched_stop() : "";
    ev.prompt_tokens     = static_cast<int32_t>(s.req.prompt.size());
    ev.completion_tokens = static_cast<int32_t>(s.n_generated);
    s.req.channel->push(std::move(ev));
    engine_.seq_end(slot);
    s              = slot_state{};
    int32_t active = 0;
    for (const auto &x : slots_) active += x.used;  // slots_ belongs to this (the tick) thread
    std::lock_guard lk(mu_);
    stats_.active = active;
}

void scheduler::on_sampled(int slot, token_id t) {
    auto &s = slots_[slot];
    if (engine_.is_eog(t) && !s.req.sampling.ignore_eos) {
        finish(slot, finish_reason::STOP);
        return;
    }
    session_event ev;
    ev.index     = s.n_generated++;
    ev.token     = t;
    ev.piece     = engine_.token_piece(t);
    ev.text      = s.text->push(ev.piece);
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
    std::vector<plan_input> in;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        const auto &s = slots_[i];
        if (!s.used) continue;
        in.push_back({i, s.req.cls, static_cast<int32_t>(s.pending.size()), s.generating,
                      s.last_served, s.arrival});
    }
    auto plan = plan_tick(in, opts_);
    if (plan.empty()) return false;

    ++tick_no_;
    std::vector<batch_item> items;
    items.reserve(plan.size());
    int32_t n_prompt = 0;
    for (const auto &e : plan) {
        auto &s = slots_[e.slot];
        batch_item it;
        it.seq = e.slot;
        it.tokens.assign(s.pending.begin(), s.pending.begin() + e.n_tokens);
        it.pos         = s.n_past;
        it.want_logits = e.n_tokens == static_cast<int32_t>(s.pending.size());
        if (!s.generating) n_prompt += e.n_tokens;
        items.push_back(std::move(it));
    }
    int rc = engine_.decode(items);
    {
        std::lock_guard lk(mu_);
        stats_.ticks++;
        if (plan.size() > 1) stats_.batched_ticks++;
        stats_.max_sequences_per_tick =
            std::max(stats_.max_sequences_per_tick, static_cast<int32_t>(plan.size()));
        stats_.prompt_tokens += n_prompt;
    }
    if (rc != 0) {
        SF_LOG_ERROR("scheduler", "decode failed (%d) for a batch of %zu sequences", rc,
                     plan.size());
        for (const auto &e : plan)
            finish(e.slot, finish_reason::ERROR, "the engine failed to decode the batch");
        return true;
    }
    for (size_t i = 0; i < plan.size(); ++i) {
        auto &s = slots_[plan[i].slot];
        s.n_past += plan[i].n_tokens;
        s.pending.erase(s.pending.begin(), s.pending.begin() + plan[i].n_tokens);
        s.last_served = tick_no_;
        if (items[i].want_logits)
            on_sampled(plan[i].slot, engine_.sample(plan[i].slot, static_cast<int>(i)));
    }
    return true;
}

void scheduler::run() {
    for (;;) {
        {
            std::unique_lock lk(mu_);
            bool busy = std::any_of(slots_.begin(), slots_.end(),
                                    [](const slot_state &s) { return s.used; });
            if (!busy) cv_.wait(lk, [&] { return stopping_ || !waiting_.empty(); });
            if (stopping_) break;
        }
        drop_cancelled();
        {
            std::lock_guard lk(mu_);
            admit_locked();
            int32_t active = 0;
            for (const auto &s : slots_) active += s.used;
            stats_.active = active;
        }
        tick();
    }
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
        if (slots_[i].used) finish(i, finish_reason::CANCELLED);
    }
}

}  // namespace sf
