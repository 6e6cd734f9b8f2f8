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

    std::vector<plan_entry> plan;
    int32_t left = opts.budget;
    for (const auto *s : order) {
        if (left <= 0) break;
        int32_t n = s->generating ? 1 : std::min({s->pending, opts.prefill_chunk, left});
        if (n <= 0) continue;
        plan.push_back({s->slot, n});
        left -= n;
    }
    return plan;
}

}  // namespace sf
