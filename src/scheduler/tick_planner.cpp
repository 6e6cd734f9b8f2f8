#include "scheduler/tick_planner.h"

#include <algorithm>

namespace sf {

namespace {

// The prefill that takes the tick's reserved share: of the class of the tick's first prefill,
// the one that has waited longest for service (last served earliest, then arrival); null when
// that is the first prefill anyway.
const plan_input *longest_waiting(const std::vector<const plan_input *> &prefills) {
    if (prefills.empty()) return nullptr;
    const plan_input *best = prefills.front();
    for (const auto *s : prefills) {
        if (s->cls != prefills.front()->cls) break;  // sorted by class first
        if (s->last_served < best->last_served ||
            (s->last_served == best->last_served && s->arrival < best->arrival))
            best = s;
    }
    return best == prefills.front() ? nullptr : best;
}

}  // namespace

std::vector<plan_entry> plan_tick(const std::vector<plan_input> &seqs,
                                  const planner_options &opts) {
    std::vector<const plan_input *> order;
    order.reserve(seqs.size());
    for (const auto &s : seqs) {
        if (s.pending > 0) order.push_back(&s);
    }
    // Decode steps before prefill; then class; then least attained service; then least
    // recently served; then arrival.
    std::sort(order.begin(), order.end(), [](const plan_input *a, const plan_input *b) {
        if (a->generating != b->generating) return a->generating;
        if (a->cls != b->cls) return a->cls < b->cls;
        if (a->served < b->served || b->served < a->served) return a->served < b->served;
        if (a->last_served != b->last_served) return a->last_served < b->last_served;
        return a->arrival < b->arrival;
    });

    const bool interactive_prefill =
        std::any_of(order.begin(), order.end(), [](const plan_input *s) {
            return !s->generating && s->cls == priority_class::INTERACTIVE;
        });
    const bool interactive_step = std::any_of(order.begin(), order.end(), [](const plan_input *s) {
        return s->generating && s->cls == priority_class::INTERACTIVE;
    });
    int32_t lower_left          = interactive_step && opts.interactive_tick_prefill >= 0
                                      ? opts.interactive_tick_prefill
                                      : opts.budget;
    std::vector<const plan_input *> steps, prefills;
    for (const auto *s : order) {
        if (s->generating)
            steps.push_back(s);
        else if (!interactive_prefill || s->cls == priority_class::INTERACTIVE)
            prefills.push_back(s);
    }
    int32_t left         = opts.budget;
    int32_t prefill_left = opts.prefill_budget > 0 ? opts.prefill_budget : opts.budget;
    const int32_t q      = std::clamp(opts.quantum, 1, std::max(prefill_left, 1));
    // The longest-waiting prefill goes first, capped at the reserved share; the rest of the
    // budget follows attained service.
    const plan_input *reserved = longest_waiting(prefills);
    int32_t reserve            = 0;
    if (reserved && opts.min_share > 0) {
        reserve = min_share_tokens(opts.min_share, std::min(prefill_left, left), q);
        std::stable_partition(prefills.begin(), prefills.end(),
                              [&](const plan_input *s) { return s == reserved; });
    }

    std::vector<plan_entry> plan;
    for (const auto *s : steps) {
        if (left <= 0) break;
        plan.push_back({s->slot, 1});
        left -= 1;
    }
    bool first_prefill = true;
    size_t reserved_at = SIZE_MAX;  // the reserved prefill's entry, when capped
    for (const auto *s : prefills) {
        if (left <= 0) break;
        const bool lower = s->cls != priority_class::INTERACTIVE;
        int32_t room     = std::min({opts.prefill_chunk, left, prefill_left});
        if (lower) room = std::min(room, lower_left);
        if (s == reserved && reserve > 0) room = std::min(room, reserve);
        int32_t n = 0;
        if (s->pending <= room) {
            n = s->pending;  // the rest of the prompt, whatever its size
        } else if (room >= q) {
            n = room / q * q;
        } else {
            // Less than a quantum left: only the tick's first prompt takes it (so a tiny
            // budget still makes progress); a second one would run the slow path.
            n = first_prefill ? room : 0;
        }
        if (n <= 0) continue;
        first_prefill = false;
        if (s == reserved && n < s->pending) reserved_at = plan.size();
        plan.push_back({s->slot, n});
        prefill_left -= n;
        left -= n;
        if (lower) lower_left -= n;
    }
    // Budget the others left: the reserved prefill may take more than its share.
    if (reserved_at != SIZE_MAX) {
        auto &e            = plan[reserved_at];
        const int32_t more = std::min(
            {opts.prefill_chunk - e.n_tokens, left, prefill_left, reserved->pending - e.n_tokens,
             reserved->cls != priority_class::INTERACTIVE ? lower_left : left});
        if (more > 0 && (e.n_tokens + more == reserved->pending || more >= q))
            e.n_tokens += e.n_tokens + more == reserved->pending ? more : more / q * q;
    }
    return plan;
}

}  // namespace sf
