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
 * A server's c1 figures over llama-bench's, for one run: `decode_over_tg128` = the median
 * request's decode rate at c1 (`decode_tokens_per_s_c1`: tokens − 1 over first to last token)
 * / tg128 (issue #21's target is ≥ 0.95); `itl_p50_over_tg128` = (1 / the median ITL at c1) /
 * tg128, the figure of records before 2026-12-03, which overstates the rate when tokens leave
 * at scheduler ticks (the worker's relay, util/relay_sched.h: gaps of 4 and 8 ms around a 5 ms
 * step have a 4 ms median); `tokens_per_s_c1_over_tg128` (the whole request, prefill and TTFT
 * included). Nulls when a figure is missing. Used for Superfluid and for the peer.
 */
nlohmann::json engine_ratios(const nlohmann::json &server_figures, const nlohmann::json &engine);

}  // namespace sf::bench
