// Which node a new session goes to (issue #17): the one where it starts soonest. Pure: no
// threads, no I/O; node_pool.h feeds it a snapshot of its nodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sf {

/** One node as placement sees it. */
struct node_load {
    bool usable     = false;  // active, reachable, model ready, link not failing
    int32_t slots   = 0;      // concurrent sequences it runs (its --parallel)
    int32_t running = 0;      // sessions placed on it and not finished
    int32_t waiting = 0;      // sessions its scheduler reports waiting
};

/**
 * The index of the node where a new session starts soonest, or -1 when none is usable. A node
 * with a free slot (slots > running + waiting) starts it at once: the most free slots wins
 * (spreads load), ties to the fewest running, then the lowest index (the head's own worker
 * first). With no free slot anywhere, the smallest queue per slot ((running + waiting + 1) /
 * slots) wins. Nodes not usable are never chosen.
 */
int pick_node(const std::vector<node_load> &nodes);

}  // namespace sf
