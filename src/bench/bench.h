// `superfluid bench`: runs one scenario against each server in turn and writes the record.
#pragma once

#include "bench/bench_options.h"

namespace sf::bench {

/** Runs the benchmark; returns the exit code (0: every server measured). */
int run(const bench_options &opts);

}  // namespace sf::bench
