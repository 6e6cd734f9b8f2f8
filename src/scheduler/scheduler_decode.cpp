// After a tick's decode: the decoded tokens settled into their sequences (service charged,
// positions advanced, snapshots, samples and draft verification), and a batch that failed to
// decode taken apart so that only the sequence that caused the failure fails (issue #38
// item 5). Members of `scheduler` (scheduler.h).
#include <chrono>

#include "scheduler/scheduler.h"
#include "util/log.h"

namespace sf {

void scheduler::settle(const std::vector<plan_entry> &plan, const std::vector<batch_item> &items,
                       const std::vector<int32_t> &drafts) {
    const auto served_at = this->now();
    if (tick_no_ % 1024 == 0) ledger_.prune(served_at);
    for (size_t i = 0; i < plan.size(); ++i) {
        auto &s = slots_[plan[i].slot].seq;
        ledger_.charge(s.service, client_of(s), plan[i].n_tokens, served_at);
        s.served_in_slot += plan[i].n_tokens;
        s.n_past += plan[i].n_tokens;
        s.pending.erase(s.pending.begin(), s.pending.begin() + plan[i].n_tokens);
        s.last_served    = tick_no_;
        s.last_served_at = served_at;
        if (!s.boundaries.empty() && s.n_past >= s.boundaries.front()) {
            if (s.n_past == s.boundaries.front()) {
                const auto t0 = std::chrono::steady_clock::now();
                opts_.cache->snapshot(plan[i].slot,
                                      std::span(s.tokens).first(static_cast<size_t>(s.n_past)),
                                      s.req.cache_scope);
                SF_LOG_DEBUG(
                    "scheduler", "snapshot at %d tokens: %.2f ms", s.n_past,
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
            }
            s.boundaries.erase(s.boundaries.begin());
        }
    }
    // The sequences without a draft sample together (the engine may use two threads), then
    // each takes its token, or verifies its draft, in plan order.
    // A sequence with an output grammar samples off the tick thread (engine_i::sample_deferred):
    // its token joins a later tick, the others' do not wait for it.
    samples_.clear();
    for (size_t i = 0; i < plan.size(); ++i) {
        if (!items[i].want_logits || drafts[i] != 0) continue;
        auto &s           = slots_[plan[i].slot].seq;
        const auto number = static_cast<uint32_t>(s.n_generated);
        if (engine_.sample_deferrable(plan[i].slot)) {
            engine_.sample_deferred(plan[i].slot, static_cast<int>(i), number);
            s.sampling = true;
        } else {
            samples_.push_back({plan[i].slot, static_cast<int>(i), number});
        }
    }
    engine_.sample_many(samples_);
    size_t k = 0;
    for (size_t i = 0; i < plan.size(); ++i) {
        if (!items[i].want_logits || slots_[plan[i].slot].seq.sampling) continue;
        if (drafts[i] > 0) {
            verify(plan[i].slot, static_cast<int>(i), items[i], drafts[i]);
        } else {
            on_sampled(plan[i].slot, samples_.at(k++).out);
        }
    }
}

void scheduler::collect_deferred() {
    {
        std::lock_guard lk(mu_);
        deferred_ready_ = false;
    }
    deferred_.clear();
    engine_.take_deferred(deferred_);
    for (const auto &[slot, t] : deferred_) {
        // A sequence that ended meanwhile had its sample dropped (seq_end, seq_start).
        if (!slots_[slot].used || !slots_[slot].seq.sampling) continue;
        slots_[slot].seq.sampling = false;
        if (t < 0)
            finish(slot, finish_reason::ERROR, "the output grammar could not be applied");
        else
            on_sampled(slot, t);
    }
}

// A failed llama_decode leaves every sequence's memory as it was before the call (llama.cpp
// restores it for an invalid batch or no room; engine_i::decode removes the batch's cells for
// the other codes), so the batch's halves can be decoded again on their own. Each half that
// decodes is settled at once, from its own logits; one that fails is halved again, down to
// the single sequence that cannot be decoded, which alone finishes with an error. Its
// neighbours lose nothing but this tick's time. A batch with no room (llama_decode's 1) gets
// the same treatment: smaller batches are what llama.cpp asks for then.
void scheduler::decode_apart(const std::vector<plan_entry> &plan,
                             const std::vector<batch_item> &items,
                             const std::vector<int32_t> &drafts) {
    if (plan.size() == 1) {
        finish(plan[0].slot, finish_reason::ERROR, "the engine failed to decode this sequence");
        return;
    }
    const size_t half = plan.size() / 2;
    for (const auto &[from, to] : {std::pair{size_t{0}, half}, std::pair{half, plan.size()}}) {
        const std::vector<plan_entry> p(plan.begin() + from, plan.begin() + to);
        const std::vector<batch_item> it(items.begin() + from, items.begin() + to);
        const std::vector<int32_t> d(drafts.begin() + from, drafts.begin() + to);
        int rc = 0;
        do {
            // Not interruptible: an interactive arrival's flag set after the failed decode
            // would take this batch back; it is decoded again then (nothing applied).
            interrupt_.store(false);
            rc = engine_.decode(it);
        } while (rc == k_decode_interrupted);
        if (rc == 0) {
            settle(p, it, d);
        } else {
            SF_LOG_WARN("scheduler", "decode failed (%d) for %zu of the batch's sequences", rc,
                        p.size());
            decode_apart(p, it, d);
        }
    }
}

}  // namespace sf
