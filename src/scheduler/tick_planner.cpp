#include "scheduler/tick_planner.h"

#include <algorithm>

namespace sf {

std::vector<plan_entry> plan_tick(const std::vector<plan_input> &seqs,
                                  const planner_options &opts) {
    std::vector<const plan_input *> order;
    order.reserve(seqs.size());
    for (const auto &s : seqs) {
        if (s.pending > 0) order.push_back(&s);
    }
    // Decode steps before prefill; then class; then least recently served; then arrival.
    std::sort(order.begin(), order.end(), [](const plan_input *a, const plan_input *b) {
        if (a->generating != b->generating) return a->generating;
        if (a->cls != b->cls) return a->cls < b->cls;
        if (a->last_served != b->last_served) return a->last_served < b->last_served;
        return a->arrival < b->arrival;
    });

    const bool interactive_prefill =
        std::any_of(order.begin(), order.end(), [](const plan_input *s) {
            return !s->generating && s->cls == priority_class::INTERACTIVE;
        });
    std::vector<plan_entry> plan;
    int32_t left         = opts.budget;
    int32_t prefill_left = opts.prefill_budget > 0 ? opts.prefill_budget : opts.budget;
    const int32_t q      = std::clamp(opts.quantum, 1, std::max(prefill_left, 1));
    bool first_prefill   = true;
    for (const auto *s : order) {
        if (left <= 0) break;
        int32_t n = 1;
        if (!s->generating) {
            if (interactive_prefill && s->cls != priority_class::INTERACTIVE) continue;
            const int32_t room = std::min({opts.prefill_chunk, left, prefill_left});
            if (s->pending <= room) {
                n = s->pending;  // the rest of the prompt, whatever its size
            } else if (room >= q) {
                n = room / q * q;
            } else {
                // Less than a quantum left: only the tick's first prompt takes it (so a tiny
                // budget still makes progress); a second one would run the slow path.
                n = first_prefill ? room : 0;
            }
            if (n > 0) first_prefill = false;
            prefill_left -= n;
        }
        if (n <= 0) continue;
        plan.push_back({s->slot, n});
        left -= n;
    }
    return plan;
}

}  // namespace sf
