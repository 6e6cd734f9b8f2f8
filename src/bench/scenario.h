// The scenarios: each measures one server for one run and returns its figures.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_options.h"
#include "bench/http_client.h"
#include "bench/server_runner.h"

namespace sf::bench {

/** Live progress on stderr: rewrites one line on a TTY, prints lines otherwise. */
class progress {
  public:
    explicit progress(bool enabled);
    /** Sets the prefix (run, server) shown before each message. */
    void set_prefix(std::string p) { prefix_ = std::move(p); }
    void say(const std::string &msg);
    /** Ends the current TTY line. */
    void done();

  private:
    bool enabled_;
    bool tty_;
    std::string prefix_;
};

/** What a scenario gets: the options, the server, progress. */
struct scenario_context {
    const bench_options &opts;
    server_runner &server;
    progress &prog;
    int run = 0;
};

/**
 * One scenario's result for one server and run: `figures` (numbers, nested objects, or
 * "YES"/"NO"; null = not measured), `samples` (raw arrays for charts), `notes`, and
 * `completion_tokens` (for the early_stop gate).
 */
struct scenario_result {
    nlohmann::json figures = nlohmann::json::object();
    nlohmann::json samples = nlohmann::json::object();
    std::vector<std::string> notes;
    long completion_tokens = 0;
};

using scenario_fn = scenario_result (*)(scenario_context &);

scenario_result run_priority(scenario_context &ctx);
scenario_result run_recovery(scenario_context &ctx);
scenario_result run_prefix(scenario_context &ctx);
scenario_result run_throughput(scenario_context &ctx);
scenario_result run_agentic(scenario_context &ctx);
scenario_result run_burst(scenario_context &ctx);
scenario_result run_endurance(scenario_context &ctx);
/** `cluster` (issue #17): a local worker vs a guest on loopback, then a guest SIGKILLed. */
scenario_result run_cluster(scenario_context &ctx);

/**
 * agentic over several runs: the verdicts of the aggregated `figures` (a server's medians) are
 * taken from the median TTFTs, as issue #6 defines them (median prefix-test TTFT / cold TTFT
 * < 0.2), not by a vote of the runs' own verdicts.
 */
void agentic_verdicts_from_medians(nlohmann::json &figures);

/** The scenario function for a name; nullptr when unknown. */
scenario_fn find_scenario(const std::string &name);

/** Sends `n` requests from `n` threads; request i starts at t0 + start_at(i) seconds. */
std::vector<stream_result> run_concurrent(int n, const std::function<stream_result(int)> &request,
                                          const std::function<double(int)> &start_at = nullptr);

/** A short warm-up request (not measured). */
void warm_up(scenario_context &ctx);

/** Request options from the bench options (timeout). */
request_options req_opts(const scenario_context &ctx, const std::string &priority = "");

}  // namespace sf::bench
