#include "placement/placement_policy.h"

namespace sf {

namespace {

// Free slots for this request: an interactive session may also take a batch sequence's.
int32_t free_slots(const node_load &n, const placement_request &req) {
    return n.slots - n.running - n.waiting + (req.interactive ? n.batch : 0);
}

// The node holds enough of the request's prefix for its cache to matter.
bool holds_prefix(const node_load &n, const placement_request &req) {
    return n.affinity > 0 && 2 * n.affinity >= req.chunks;
}

}  // namespace

int pick_node(const std::vector<node_load> &nodes, const placement_request &req) {
    int best = -1;
    // Among nodes that can start it now: (holds the prefix, match, free, -running), greatest.
    auto better_now = [&](const node_load &a, const node_load &b) {
        const bool ha = holds_prefix(a, req), hb = holds_prefix(b, req);
        if (ha != hb) return ha;
        if (ha && a.affinity != b.affinity) return a.affinity > b.affinity;
        const int32_t fa = free_slots(a, req), fb = free_slots(b, req);
        if (fa != fb) return fa > fb;
        return a.running < b.running;
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
        const node_load &n = nodes[i];
        if (!n.usable || n.slots <= 0 || free_slots(n, req) <= 0) continue;
        if (best < 0 || better_now(n, nodes[static_cast<size_t>(best)])) best = static_cast<int>(i);
    }
    if (best >= 0) return best;
    double b_queue = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const node_load &n = nodes[i];
        if (!n.usable || n.slots <= 0) continue;
        const double q = double(n.running + n.waiting + 1) / n.slots;
        if (best < 0 || q < b_queue ||
            (q == b_queue && n.affinity > nodes[static_cast<size_t>(best)].affinity)) {
            best    = static_cast<int>(i);
            b_queue = q;
        }
    }
    return best;
}

}  // namespace sf
