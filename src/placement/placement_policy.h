// Which node a new session goes to (issue #17): the one where it starts soonest, by priority
// class, weighed by prefix affinity and load. Pure: no threads, no I/O; node_pool.h feeds it a
// snapshot of its nodes and prefix_affinity.h's matches.
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
    int32_t batch   = 0;      // batch-class sequences it runs (an interactive one may preempt)
    size_t affinity = 0;      // leading prefix chunks of the request it holds (prefix_affinity.h)
};

/** The session being placed. */
struct placement_request {
    bool interactive = false;  // its priority class is interactive
    size_t chunks    = 0;      // prefix chunks of its text (prefix_chain's length)
};

/**
 * The index of the node where a new session starts soonest, or -1 when none is usable.
 *
 * A node starts it at once when it has a free slot: slots > running + waiting, or, for an
 * interactive session, a batch sequence it would preempt (the worker's scheduler parks batch
 * work for interactive). Among those, a node holding at least half of the request's prefix
 * chunks (its cache will skip that prefill — a conversation's next turn) wins, the longest
 * match first; otherwise, and on ties, the most free slots (spreads load), then the fewest
 * running, then the lowest index (the head's own worker first). With no free slot anywhere,
 * the smallest queue per slot ((running + waiting + 1) / slots) wins, ties to the longer
 * match. Nodes not usable are never chosen.
 */
int pick_node(const std::vector<node_load> &nodes, const placement_request &req = {});

}  // namespace sf
