#include "cli/bench_command.h"

#include <unistd.h>

#include <climits>

#include "bench/bench.h"

namespace sf {

void add_bench_options(CLI::App &cmd, bench::bench_options &o) {
    cmd.add_option("scenario", o.scenario,
                   "priority | recovery | prefix | throughput | agentic | burst | endurance | "
                   "cluster")
        ->required()
        ->check(CLI::IsMember({"priority", "recovery", "prefix", "throughput", "agentic", "burst",
                               "endurance", "cluster"}));
    cmd.add_option("--model", o.model, "GGUF model: the bench starts the servers itself");
    cmd.add_option("--against", o.against, "Peer to run too, on the same model: llama-server")
        ->check(CLI::IsMember({"llama-server"}));
    cmd.add_option("--url", o.url, "Measure an already running OpenAI-compatible server");
    cmd.add_option("--runs", o.runs, "Repetitions (median and min–max reported)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    cmd.add_option("--out", o.out, "Output directory (default bench-out/SCENARIO)");
    cmd.add_option("--llama-server", o.llama_server_bin, "llama-server binary")
        ->capture_default_str();
    cmd.add_option("--ctx-size", o.ctx_size, "Context per sequence, both servers")
        ->capture_default_str();
    cmd.add_option("--parallel", o.parallel, "Sequences/slots, both servers")
        ->capture_default_str();
    cmd.add_flag("--server-defaults", o.server_defaults,
                 "Start both servers with their own context and slot defaults (no --ctx-size, "
                 "--parallel, -c, -np)");
    cmd.add_flag("--kv-unified,!--no-kv-unified", o.kv_unified,
                 "Superfluid with one KV pool for all sequences (the default; --no-kv-unified: "
                 "a KV stream per sequence, serve --no-kv-unified)");
    cmd.add_option("--peer-parallel", o.peer_parallel,
                   "llama-server's slots (-np), also with --server-defaults (0: as --parallel, "
                   "or its own default); its total context is --peer-ctx-size per slot")
        ->capture_default_str();
    cmd.add_option("--peer-ctx-size", o.peer_ctx_size,
                   "llama-server's context per slot (-c is it times -np), also with "
                   "--server-defaults, e.g. 8192 with --peer-parallel 8 for -c 65536 -np 8 "
                   "(0: as --ctx-size)")
        ->capture_default_str();
    cmd.add_option("--threads", o.threads, "Inference threads (0 = engine default)")
        ->capture_default_str();
    cmd.add_option("--timeout", o.request_timeout_s, "Per-request read timeout, seconds")
        ->capture_default_str();
    cmd.add_flag("!--no-progress", o.progress, "No live progress on stderr");
    // Scenario sizes (defaults: the full sizes).
    cmd.add_option("--agents", o.agents,
                   "priority: background agents (default 8); endurance: trajectories at once "
                   "(default 1)");
    cmd.add_option("--doc-tokens", o.doc_tokens, "priority: document tokens per agent")
        ->capture_default_str();
    cmd.add_option("--agent-max-tokens", o.agent_max_tokens, "priority: max_tokens per agent")
        ->capture_default_str();
    cmd.add_flag("--unmarked", o.unmarked,
                 "priority: no priority header, key or class in any request (the usual client)");
    cmd.add_option("--launch-key", o.launch_key,
                   "priority --unmarked: who carries the key `superfluid launch` gives an agent "
                   "(agents | chat); no class either way")
        ->check(CLI::IsMember({"agents", "chat"}));
    cmd.add_option("--chat-at", o.chat_at_s, "priority: seconds before the chat question")
        ->capture_default_str();
    cmd.add_option("--kill-after", o.kill_after_tokens,
                   "recovery, cluster: tokens before the SIGKILL (cluster: of every stream)")
        ->capture_default_str();
    cmd.add_option("--stream-tokens", o.stream_tokens,
                   "recovery, cluster: length of the stream(s) killed mid-way")
        ->capture_default_str();
    cmd.add_flag("--recovery-through-guest", o.recovery_through_guest,
                 "recovery: Superfluid's stream runs through a cluster of two loopback guests and "
                 "the guest running it is SIGKILLed (join and worker), not the local worker");
    cmd.add_option("--standby", o.standby,
                   "Superfluid's hot standby worker: auto, on or off (default: serve's, auto)")
        ->check(CLI::IsMember({"auto", "on", "off"}));
    cmd.add_option("--throughput-temperature", o.throughput_temperature,
                   "throughput: the requests' temperature (0: greedy)")
        ->check(CLI::Range(0.0, 2.0))
        ->capture_default_str();
    cmd.add_flag("!--no-journal-cost", o.journal_cost,
                 "throughput: skip the journal's cost (one server restart per journal mode)");
    cmd.add_option("--spec-type", o.spec_type,
                   "Speculative decoding on both servers: none, ngram (llama-server: "
                   "ngram-simple), draft (draft-simple; needs --model-draft) or mtp (draft-mtp)")
        ->check(CLI::IsMember({"none", "ngram", "draft", "mtp"}))
        ->capture_default_str();
    cmd.add_option("--model-draft", o.model_draft, "The draft model (.gguf) of --spec-type draft");
    cmd.add_option("--spec-draft-max", o.spec_draft_max,
                   "Most draft tokens per sequence and step, both servers")
        ->capture_default_str();
    cmd.add_option("--prefix-requests", o.prefix_requests, "prefix: requests per variant")
        ->capture_default_str();
    cmd.add_option("--prefix-tokens", o.prefix_tokens, "prefix: shared system prompt tokens")
        ->capture_default_str();
    cmd.add_option("--prefix-concurrency", o.prefix_concurrency, "prefix: concurrent clients")
        ->capture_default_str();
    cmd.add_option("--concurrency", o.concurrency, "throughput: levels")->capture_default_str();
    cmd.add_option("--throughput-tokens", o.throughput_tokens, "throughput: max_tokens")
        ->check(CLI::PositiveNumber);
    cmd.add_option("--throughput-rounds", o.throughput_rounds,
                   "throughput: requests each client sends in turn at every level")
        ->capture_default_str();
    cmd.add_option("--cluster-concurrency", o.cluster_concurrency,
                   "cluster: the level measured besides 1 (default --parallel)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--cluster-rounds", o.cluster_rounds,
                   "cluster: requests each client sends in turn at every level")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd.add_option("--cluster-tokens", o.cluster_tokens, "cluster: max_tokens at the levels")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd.add_option("--cluster-streams", o.cluster_streams,
                   "cluster: streams during the node loss (default --parallel)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--cluster-guest-threads", o.cluster_guest_threads,
                   "cluster: threads of each of the two node-loss guests (default half the cores)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--system-bytes", o.agentic_system_bytes, "agentic: system prompt bytes")
        ->capture_default_str();
    cmd.add_option("--burst", o.burst_sizes, "burst: sizes to sweep")->capture_default_str();
    cmd.add_option("--burst-tokens", o.burst_tokens, "burst: max_tokens")->capture_default_str();
    cmd.add_option("--short-tokens", o.short_tokens, "max_tokens of short answers")
        ->capture_default_str();
    cmd.add_option("--turns", o.endurance_turns, "endurance: tool calls per trajectory")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
    cmd.add_option("--start-tokens", o.endurance_start_tokens,
                   "endurance: about the first turn's context (system prompt + task)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd.add_option("--result-tokens-min", o.endurance_result_min,
                   "endurance: tool result, fewest tokens")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd.add_option("--result-tokens-max", o.endurance_result_max,
                   "endurance: tool result, most tokens")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd.add_option("--call-tokens", o.endurance_call_tokens, "endurance: max_tokens of a turn")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd.add_option("--interrupt-at", o.endurance_interrupt_at,
                   "endurance: the turn whose answer the client drops mid-stream and resumes "
                   "(default: half-way; 0: none)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--api", o.endurance_api,
                   "endurance: the API the trajectory speaks (openai: chat completions, "
                   "anthropic: /v1/messages, responses: /v1/responses, ollama: /api/chat)")
        ->capture_default_str()
        ->check(CLI::IsMember({"openai", "anthropic", "responses", "ollama"}));
    cmd.add_option("--kill", o.endurance_kill,
                   "endurance: at the interruption, also SIGKILL this process: worker (the head "
                   "restarts it) or head (restarted on the same state directory); llama-server: "
                   "its one process, restarted")
        ->check(CLI::IsMember({"worker", "head"}));
}

int run_bench(bench::bench_options o, int argc, char **argv) {
    if (o.superfluid_bin.empty()) {
        char buf[PATH_MAX];
        ssize_t n        = readlink("/proc/self/exe", buf, sizeof buf - 1);
        o.superfluid_bin = n > 0 ? std::string(buf, static_cast<size_t>(n)) : argv[0];
    }
    bench::resolve_defaults(o);
    for (int i = 0; i < argc; ++i) {
        if (i) o.command_line += ' ';
        o.command_line += argv[i];
    }
    return bench::run(o);
}

}  // namespace sf
