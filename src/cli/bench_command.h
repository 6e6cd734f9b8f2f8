// `superfluid bench SCENARIO`: the command-line options of the benchmark suite.
#pragma once

#include <CLI/CLI.hpp>

#include "bench/bench_options.h"

namespace sf {

/** Declares the `bench` options on `cmd`, filling `opts`. */
void add_bench_options(CLI::App &cmd, bench::bench_options &opts);

/** Runs `superfluid bench` (defaults filled in from argv). Returns the exit code. */
int run_bench(bench::bench_options opts, int argc, char **argv);

}  // namespace sf
