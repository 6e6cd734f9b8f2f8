// `superfluid bench`: the options of one benchmark invocation (scenario sizes included).
#pragma once

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace sf::bench {

/** Everything one `superfluid bench SCENARIO` run needs; defaults are the full sizes. */
struct bench_options {
    std::string scenario;  // priority|recovery|prefix|throughput|agentic|burst|endurance|cluster
    std::string model;     // GGUF path: the bench starts the servers itself
    std::vector<std::string> against;  // peers to start too: "llama-server"
    std::string url;                   // measure an already running server instead
    int runs = 1;                      // repetitions; every figure is reported as median/min/max
    std::string out;                   // output directory (results.json, report.md, *.svg)
    std::string superfluid_bin;        // default: this executable
#ifdef SF_LLAMA_SERVER_PATH
    std::string llama_server_bin = SF_LLAMA_SERVER_PATH;  // the pinned tree's llama-server
#else
    std::string llama_server_bin = "llama-server";
#endif
    std::string command_line;  // the exact command, for the record
    int ctx_size      = 8192;  // per sequence, both servers
    int parallel      = 8;     // sequences / slots, both servers
    int peer_parallel = 0;     // llama-server's slots (-np); 0: same as `parallel`
    int peer_ctx_size = 0;     // llama-server's context per slot (-c is it × -np); 0: `ctx_size`
    // --server-defaults: neither server gets a context or slot flag (each its own defaults:
    // ours sized by KV memory, llama-server's 4 slots of the model's trained context), unless
    // --peer-parallel / --peer-ctx-size tune the peer (llama-server as a user would set it up).
    bool server_defaults     = false;
    bool kv_unified          = true;  // Superfluid's KV pool (serve's default); false: streams
    int threads              = 0;     // inference threads (0 = engine default)
    double request_timeout_s = 900;   // one HTTP request's read timeout
    bool progress            = true;  // live progress on stderr

    // priority (background agents) and endurance (trajectories); -1: the scenario's default,
    // 8 for priority, 1 for endurance (resolved by resolve_defaults)
    int agents           = -1;
    int doc_tokens       = 7500;
    int agent_max_tokens = 256;
    double chat_at_s     = 2.0;
    int chat_max_tokens  = 32;
    bool unmarked        = false;  // no priority header, key or class in any request
    // priority, with --unmarked: who carries the key `superfluid launch` gives an agent
    // ("sk-superfluid-claude", no class): "" nobody, "agents", or "chat" (issue #36's mixes)
    std::string launch_key;
    // recovery
    int kill_after_tokens = 64;
    int stream_tokens     = 256;
    // recovery: superfluid's stream runs through a loopback cluster (a routing-only head, two
    // guests) and the guest running it is killed, instead of the local worker (issue #37)
    bool recovery_through_guest = false;
    // Superfluid's hot standby worker (serve --standby auto|on|off); empty: serve's default.
    std::string standby;
    // Speculative decoding on both servers (issue #21): none | ngram | draft (llama-server:
    // --spec-type ngram-simple | draft-simple), the draft model (-md) and draft tokens per step.
    std::string spec_type = "none";
    std::string model_draft;
    int spec_draft_max = 8;
    // prefix
    int prefix_requests    = 32;
    int prefix_tokens      = 4000;
    int prefix_concurrency = 8;
    // throughput
    std::vector<int> concurrency = {1, 8, 32};
    int throughput_tokens        = 128;
    int throughput_rounds        = 3;     // requests each of the C clients sends, one after another
    bool journal_cost            = true;  // throughput: the journal's cost too (journal_cost.h)
    // throughput: the requests' temperature (seeded, top_k 40; 0: greedy, which speculation
    // records use: a random-weight model's sampled token is rarely a draft's argmax)
    double throughput_temperature = 1.0;
    // agentic
    int agentic_system_bytes = 7000;
    // burst
    std::vector<int> burst_sizes = {30, 60, 80};
    int burst_tokens             = 64;  // the burst: requests of 64 tokens
    double burst_window_s        = 0.2;
    // short answers (prefix, agentic, warm-up)
    int short_tokens = 8;
    // endurance (issue #23: 80 tool calls, the context growing from ~10K to ~50K tokens)
    int endurance_turns        = 80;
    int endurance_start_tokens = 10000;
    int endurance_result_min   = 300;  // tokens of one tool result, drawn per turn in [min, max]
    int endurance_result_max   = 600;
    int endurance_call_tokens =
        256;  // max_tokens of a turn (one bounded tool call; see endurance.cpp)
    int endurance_interrupt_at =
        -1;  // turn the first trajectory drops mid-answer; -1: turns/2, 0: none
    std::string endurance_api = "openai";  // openai | anthropic | responses | ollama
    std::string endurance_kill;            // killed at the interruption: worker | head | ""
    // cluster (issue #17): levels 1 and N, each client sending `rounds` requests of `tokens` in
    // turn; node-loss streams of --stream-tokens on two guests of `guest_threads` each, one
    // killed once every stream has --kill-after token events (0s: see resolve_defaults)
    int cluster_concurrency   = 0;
    int cluster_rounds        = 3;
    int cluster_tokens        = 128;
    int cluster_streams       = 0;
    int cluster_guest_threads = 0;
};

/**
 * Fills the scenario-dependent defaults after parsing: agents, the interrupted turn, and
 * cluster's level, streams (--parallel) and node-loss guest threads (half the cores).
 */
inline void resolve_defaults(bench_options &o) {
    if (o.agents < 0) o.agents = o.scenario == "endurance" ? 1 : 8;
    if (o.endurance_interrupt_at < 0) o.endurance_interrupt_at = (o.endurance_turns + 1) / 2;
    if (o.cluster_concurrency <= 0) o.cluster_concurrency = o.parallel;
    if (o.cluster_streams <= 0) o.cluster_streams = o.parallel;
    if (o.cluster_guest_threads <= 0)
        o.cluster_guest_threads =
            std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
}

}  // namespace sf::bench
