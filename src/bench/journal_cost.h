// The tokens/s cost of Superfluid's token journal: the same decode workload with the journal
// off and at each `--journal-sync` level, side by side in one run (part of `throughput`).
#pragma once

#include "bench/scenario.h"

namespace sf::bench {

/**
 * Restarts the (bench-controlled Superfluid) server once per journal mode and measures
 * aggregate decode tokens/s at concurrency `--parallel`; adds `journal.<mode>.tokens_per_s`
 * and `journal.<mode>.vs_off` (tokens/s relative to journaling off) to `r.figures`, modes
 * journal_off, sync_off, sync_normal, sync_full. Leaves the server running with the default
 * (sync normal). No-op (figures null) for other servers.
 */
void measure_journal_cost(scenario_context &ctx, scenario_result &r);

}  // namespace sf::bench
