#include "bench/bench.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "bench/aggregate.h"
#include "bench/engine_limit.h"
#include "bench/overhead.h"
#include "bench/process_util.h"
#include "bench/report.h"
#include "bench/scenario.h"
#include "bench/server_runner.h"
#include "bench/stats.h"

namespace sf::bench {

namespace fs = std::filesystem;

namespace {

// Quality-gate thresholds (from the issue).
constexpr double kSwapMbLimit       = 500;
constexpr uint64_t kSwapoutLimit    = 1000;
constexpr double kEarlyStopFraction = 0.5;

std::string iso_now() {
    std::time_t t = std::time(nullptr);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return b;
}

// Superfluid's `serve --standby`: --standby, else `off` for cluster (its guests run no standby
// worker, so neither does the local side it is compared with); "" for serve's default.
std::string superfluid_standby(const bench_options &o) {
    return o.standby.empty() && o.scenario == "cluster" ? "off" : o.standby;
}

std::vector<server_spec> server_specs(const bench_options &o) {
    std::vector<server_spec> specs;
    if (!o.url.empty()) {
        specs.push_back({server_kind::external, o.url, "", "", o.url, o.ctx_size, o.parallel, 0});
        return specs;
    }
    const int ctx = o.server_defaults ? 0 : o.ctx_size;
    const int par = o.server_defaults ? 0 : o.parallel;
    specs.push_back({server_kind::superfluid, "superfluid", o.superfluid_bin, o.model, "", ctx, par,
                     o.threads});
    const std::string standby = superfluid_standby(o);
    if (!standby.empty()) specs.back().args = {"--standby", standby};
    if (!o.kv_unified) specs.back().args.push_back("--no-kv-unified");
    std::vector<std::string> peer_spec;  // the same speculation on both servers
    if (o.spec_type != "none") {
        const std::string n = std::to_string(o.spec_draft_max);
        auto &a             = specs.back().args;
        a.insert(a.end(), {"--spec-type", o.spec_type, "--spec-draft-max", n});
        const std::string peer = o.spec_type == "draft" ? "draft-simple"
                                 : o.spec_type == "mtp" ? "draft-mtp"
                                                        : "ngram-simple";
        peer_spec              = {"--spec-type", peer, "--spec-draft-n-max", n};
        if (!o.model_draft.empty()) {
            a.insert(a.end(), {"--model-draft", o.model_draft});
            peer_spec.insert(peer_spec.end(), {"-md", o.model_draft});
        }
    }
    if (!o.against.empty()) {  // the only peer so far: llama-server, tuned on its own if asked
        const int peer_par = o.peer_parallel > 0 ? o.peer_parallel : par;
        const int peer_ctx = o.peer_ctx_size > 0 ? o.peer_ctx_size : ctx;
        specs.push_back({server_kind::llama_server, "llama-server", o.llama_server_bin, o.model, "",
                         peer_ctx, peer_par, o.threads});
    }
    if (!o.against.empty()) specs.back().peer_args = peer_spec;
    return specs;
}

// llama-bench's figures over the runs and each server's c1 figures over them, run by run:
// {"llama-bench": {pp512…, tg128…}, "superfluid/llama-bench": {decode_over_tg128, …},
//  "llama-server/llama-bench": {…} (with --against), "per_run": [...], "command"}.
nlohmann::json engine_record(const nlohmann::json &engine_runs, const nlohmann::json &per_run) {
    std::vector<nlohmann::json> figures, ratios, peer_ratios;
    nlohmann::json out = {{"per_run", engine_runs}};
    for (size_t r = 0; r < engine_runs.size(); ++r) {
        nlohmann::json e = engine_runs[r];
        if (e.contains("error")) continue;
        out["command"] = e["command"];
        e.erase("command");
        figures.push_back(e);
        if (r < per_run.size() && per_run[r].contains("superfluid"))
            ratios.push_back(engine_ratios(per_run[r]["superfluid"]["figures"], e));
        if (r < per_run.size() && per_run[r].contains("llama-server"))
            peer_ratios.push_back(engine_ratios(per_run[r]["llama-server"]["figures"], e));
    }
    out["llama-bench"] = figures.empty() ? nlohmann::json::object() : aggregate_trees(figures);
    out["superfluid/llama-bench"] =
        ratios.empty() ? nlohmann::json::object() : aggregate_trees(ratios);
    if (!peer_ratios.empty()) out["llama-server/llama-bench"] = aggregate_trees(peer_ratios);
    return out;
}

nlohmann::json sizes(const bench_options &o) {
    return {{"agents", o.agents},
            {"doc_tokens", o.doc_tokens},
            {"agent_max_tokens", o.agent_max_tokens},
            {"chat_at_s", o.chat_at_s},
            {"kill_after_tokens", o.kill_after_tokens},
            {"stream_tokens", o.stream_tokens},
            {"prefix_requests", o.prefix_requests},
            {"prefix_tokens", o.prefix_tokens},
            {"prefix_concurrency", o.prefix_concurrency},
            {"concurrency", o.concurrency},
            {"throughput_tokens", o.throughput_tokens},
            {"throughput_temperature", o.throughput_temperature},
            {"spec_type", o.spec_type},
            {"model_draft", o.model_draft},
            {"spec_draft_max", o.spec_draft_max},
            {"agentic_system_bytes", o.agentic_system_bytes},
            {"burst_sizes", o.burst_sizes},
            {"burst_tokens", o.burst_tokens},
            {"burst_window_s", o.burst_window_s},
            {"endurance_turns", o.endurance_turns},
            {"endurance_start_tokens", o.endurance_start_tokens},
            {"endurance_result_tokens", {o.endurance_result_min, o.endurance_result_max}},
            {"endurance_call_tokens", o.endurance_call_tokens},
            {"endurance_interrupt_at", o.endurance_interrupt_at},
            {"endurance_api", o.endurance_api},
            {"endurance_kill", o.endurance_kill},
            {"cluster_concurrency", o.cluster_concurrency},
            {"cluster_rounds", o.cluster_rounds},
            {"cluster_tokens", o.cluster_tokens},
            {"cluster_streams", o.cluster_streams},
            {"cluster_guest_threads", o.cluster_guest_threads}};
}

// One server, one run: start, scenario, peak RSS, stop; the gates measured around it.
nlohmann::json run_one(const bench_options &o, const server_spec &spec, scenario_fn fn, int run,
                       const std::string &work, const std::string &logs, progress &prog) {
    nlohmann::json rec;
    prog.set_prefix("run " + std::to_string(run + 1) + "/" + std::to_string(o.runs) + " " +
                    spec.name + " " + o.scenario);
    std::vector<pid_t> others = engine_processes({});
    swap_counters sw0         = read_swap_counters();
    std::string dir           = work + "/run" + std::to_string(run + 1) + "-" + spec.name;
    server_runner server(spec, dir);
    prog.say("starting");
    std::string err;
    scenario_result res;
    if (server.start(err)) {
        scenario_context ctx{o, server, prog, run};
        try {
            res = fn(ctx);
        } catch (const std::exception &e) {
            err = std::string("scenario failed: ") + e.what();
        }
        for (pid_t p : engine_processes(server.own_pids()))
            if (std::find(others.begin(), others.end(), p) == others.end()) others.push_back(p);
        prog.say("stopping");
        server.stop();
    }
    swap_counters sw1 = read_swap_counters();
    if (server.controlled()) {
        std::error_code ec;
        fs::copy_file(server.log_path(),
                      logs + "/run" + std::to_string(run + 1) + "-" + spec.name + ".log",
                      fs::copy_options::overwrite_existing, ec);
    } else if (others.size() <= 1) {
        others.clear();  // the external server itself
    }
    double page_mb = static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
    uint64_t sin = sw1.pswpin - sw0.pswpin, sout = sw1.pswpout - sw0.pswpout;
    double swap_mb                 = static_cast<double>(sin + sout) * page_mb;
    rec["figures"]                 = res.figures;
    rec["figures"]["peak_rss_mib"] = server.peak_rss_mib();
    rec["samples"]                 = res.samples;
    rec["notes"]                   = res.notes;
    rec["completion_tokens"]       = res.completion_tokens;
    rec["gates"]                   = {{"early_stop", 0},
                                      {"memory_pressure", swap_mb > kSwapMbLimit || sout > kSwapoutLimit ? 1 : 0},
                                      {"swap_mb", swap_mb},
                                      {"swapouts", sout},
                                      {"duplicate_processes", others.empty() ? 0 : 1},
                                      {"other_engine_pids", others}};
    if (!err.empty()) rec["error"] = err;
    prog.say(err.empty() ? "done" : "failed: " + err);
    prog.done();
    return rec;
}

}  // namespace

int run(const bench_options &o) {
    scenario_fn fn = find_scenario(o.scenario);
    if (!fn) {
        std::fprintf(stderr, "unknown scenario '%s'\n", o.scenario.c_str());
        return 2;
    }
    if (o.model.empty() == o.url.empty()) {
        std::fprintf(stderr, "give exactly one of --model PATH or --url URL\n");
        return 2;
    }
    if (o.scenario == "cluster" && !o.against.empty()) {
        std::fprintf(stderr,
                     "cluster compares Superfluid through a guest with itself: no --against\n");
        return 2;
    }
    std::string out = o.out.empty() ? "bench-out/" + o.scenario : o.out;
    fs::create_directories(out + "/logs");
    std::string work =
        (fs::temp_directory_path() / ("sf-bench-" + std::to_string(getpid()))).string();
    fs::create_directories(work);
    progress prog(o.progress);
    double t0 = now_s();

    const std::string standby = superfluid_standby(o);
    nlohmann::json rec;
    rec["schema"]     = "superfluid-bench/1";
    rec["scenario"]   = o.scenario;
    rec["command"]    = o.command_line;
    rec["started_at"] = iso_now();
    rec["runs"]       = o.runs;
    rec["sizes"]      = sizes(o);
    // What each server was really given (server_specs): null where it got no flag (its own
    // default, as with --server-defaults).
    const auto given       = [](int v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(); };
    const auto specs_given = server_specs(o);
    const server_spec *peer_given = specs_given.size() > 1 ? &specs_given[1] : nullptr;
    rec["settings"]               = {{"server_defaults", o.server_defaults},
                                     {"ctx_size", given(specs_given[0].ctx_size)},
                                     {"parallel", given(specs_given[0].parallel)},
                                     {"peer_parallel", peer_given ? given(peer_given->parallel) : nullptr},
                                     {"peer_ctx_size", peer_given ? given(peer_given->ctx_size) : nullptr},
                                     {"threads", o.threads},
                                     {"kv_unified", o.kv_unified},
                                     {"standby", standby.empty() ? "default" : standby}};
    rec["machine"]                = machine_info();
    rec["model"]                  = nullptr;
    if (!o.model.empty()) {
        prog.say("model checksum");
        std::error_code ec;
        rec["model"] = {{"path", fs::absolute(o.model).string()},
                        {"sha256", sha256_file(o.model)},
                        {"bytes", fs::file_size(o.model, ec)}};
    }
    rec["versions"] = {{"superfluid", first_output_line(o.superfluid_bin + " --version")}};
    if (!o.against.empty())
        rec["versions"]["llama-server"] = first_output_line(o.llama_server_bin + " --version");
    prog.say("harness overhead");
    rec["harness"] = measure_overhead();
    prog.done();

    auto specs             = specs_given;
    nlohmann::json per_run = nlohmann::json::array();
    bool all_ok            = true;
    // throughput on a model file: llama-bench on it too, once per run (the engine's own limit).
    const std::string llama_bench =
        o.scenario == "throughput" && !o.model.empty() ? llama_bench_path(o.llama_server_bin) : "";
    nlohmann::json engine_runs = nlohmann::json::array();
    for (int r = 0; r < o.runs; ++r) {
        nlohmann::json run_rec = nlohmann::json::object();
        // Odd runs start with the last server: the machine's speed drifts within minutes, and
        // a fixed order would hand that drift to one side of every pair.
        for (size_t k = 0; k < specs.size(); ++k) {
            const auto &spec   = specs[r % 2 == 0 ? k : specs.size() - 1 - k];
            run_rec[spec.name] = run_one(o, spec, fn, r, work, out + "/logs", prog);
            if (run_rec[spec.name].contains("error")) all_ok = false;
        }
        if (!llama_bench.empty()) {
            prog.say("llama-bench pp512 tg128");
            engine_runs.push_back(run_llama_bench(llama_bench, o.model, o.threads));
        }
        per_run.push_back(run_rec);
    }
    // early_stop: a run whose completion is under half the server's median.
    for (const auto &spec : specs) {
        std::vector<double> c;
        for (const auto &run : per_run)
            c.push_back(run[spec.name]["completion_tokens"].get<double>());
        double m = median(c);
        for (auto &run : per_run)
            run[spec.name]["gates"]["early_stop"] =
                run[spec.name]["completion_tokens"].get<double>() < kEarlyStopFraction * m ? 1 : 0;
    }
    rec["servers"]      = nlohmann::json::object();
    rec["server_order"] = nlohmann::json::array();
    for (const auto &spec : specs) rec["server_order"].push_back(spec.name);
    for (const auto &spec : specs) {
        std::vector<nlohmann::json> trees;
        nlohmann::json notes = nlohmann::json::array();
        for (const auto &run : per_run) {
            trees.push_back(run[spec.name]["figures"]);
            for (const auto &n : run[spec.name]["notes"])
                if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
            if (run[spec.name].contains("error")) notes.push_back(run[spec.name]["error"]);
        }
        rec["servers"][spec.name] = aggregate_trees(trees);
        if (o.scenario == "agentic") agentic_verdicts_from_medians(rec["servers"][spec.name]);
        rec["servers"][spec.name]["notes"] = notes;
    }
    rec["ratios"] = nlohmann::json::object();
    for (size_t s = 1; s < specs.size(); ++s) {
        std::vector<nlohmann::json> trees;
        for (const auto &run : per_run) {
            nlohmann::json a = run[specs[0].name]["figures"], b = run[specs[s].name]["figures"];
            a.erase("peak_rss_mib");
            b.erase("peak_rss_mib");
            trees.push_back(ratio_tree(a, b));
        }
        rec["ratios"][specs[0].name + "/" + specs[s].name] = aggregate_trees(trees);
    }
    if (!engine_runs.empty()) rec["engine"] = engine_record(engine_runs, per_run);
    rec["per_run"]    = per_run;
    rec["duration_s"] = now_s() - t0;
    rec["charts"]     = write_charts(rec, out);
    std::ofstream(out + "/results.json") << rec.dump(2) << "\n";
    std::ofstream(out + "/report.md") << markdown_report(rec);
    std::printf("%s", terminal_table(rec).c_str());
    std::printf("\nharness overhead per request (stub): TTFT %s s, total %s s\n",
                rec["harness"]["ttft_s"].is_object()
                    ? std::to_string(rec["harness"]["ttft_s"]["median"].get<double>()).c_str()
                    : "-",
                rec["harness"]["total_s"].is_object()
                    ? std::to_string(rec["harness"]["total_s"]["median"].get<double>()).c_str()
                    : "-");
    if (rec.contains("engine") && rec["engine"]["llama-bench"].contains("tg128_tokens_per_s")) {
        const auto &e = rec["engine"];
        auto med      = [](const nlohmann::json &v) {
            return is_summary(v) && v["median"].is_number() ? v["median"].get<double>() : -1.0;
        };
        std::printf(
            "llama-bench (same file): pp512 %.1f, tg128 %.1f tokens/s; superfluid c1 "
            "decode / tg128 = %.3f",
            med(e["llama-bench"]["pp512_tokens_per_s"]),
            med(e["llama-bench"]["tg128_tokens_per_s"]),
            med(e["superfluid/llama-bench"].value("decode_over_tg128", nlohmann::json())));
        if (e.contains("llama-server/llama-bench"))
            std::printf(", llama-server's %.3f", med(e["llama-server/llama-bench"].value(
                                                     "decode_over_tg128", nlohmann::json())));
        std::printf("\n");
    }
    std::printf("wrote %s/results.json, report.md, %zu chart(s)\n", out.c_str(),
                rec["charts"].size());
    std::error_code ec;
    fs::remove_all(work, ec);
    return all_ok ? 0 : 1;
}

}  // namespace sf::bench
