#include "placement/placement_policy.h"

namespace sf {

int pick_node(const std::vector<node_load> &nodes) {
    int best       = -1;
    int32_t b_free = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const node_load &n = nodes[i];
        if (!n.usable || n.slots <= 0) continue;
        const int32_t free = n.slots - n.running - n.waiting;
        if (free <= 0) continue;
        if (best < 0 || free > b_free || (free == b_free && n.running < nodes[best].running)) {
            best   = static_cast<int>(i);
            b_free = free;
        }
    }
    if (best >= 0) return best;
    double b_queue = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const node_load &n = nodes[i];
        if (!n.usable || n.slots <= 0) continue;
        const double q = double(n.running + n.waiting + 1) / n.slots;
        if (best < 0 || q < b_queue) {
            best    = static_cast<int>(i);
            b_queue = q;
        }
    }
    return best;
}

}  // namespace sf
