// The engine's own limit beside the servers (issue #21): llama-bench of the pinned tree on the
// same GGUF file, pp512 (prompt processing) and tg128 (generation), run once per bench run of
// `throughput`, so the record shows how close serving comes to the engine alone.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/bench_options.h"

namespace sf::bench {

/**
 * The llama-bench binary beside `llama_server_bin` (the same build tree); "" when absent.
 */
std::string llama_bench_path(const std::string &llama_server_bin);

/**
 * Runs `llama-bench -m MODEL -p 512 -n 128 -r 1 -o json [-t THREADS]` and returns
 * {"pp512_tokens_per_s", "tg128_tokens_per_s"} (llama-bench's avg_ts), or {"error": …} when it
 * fails or its JSON lacks either test.
 */
nlohmann::json run_llama_bench(const std::string &bin, const std::string &model, int threads);

/**
 * Superfluid's c1 figures over llama-bench's, for one run: `decode_over_tg128` = (1 / the
 * median ITL at c1) / tg128 (the target is ≥ 0.95) and `tokens_per_s_c1_over_tg128`
 * (the whole request, prefill and TTFT included). Nulls when a figure is missing.
 */
nlohmann::json engine_ratios(const nlohmann::json &superfluid_figures,
                             const nlohmann::json &engine);

}  // namespace sf::bench
