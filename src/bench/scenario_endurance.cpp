// Scenario `endurance`: --agents trajectories at once (bench/endurance.h) in --api, the first
// one interrupted (and, with --kill, a process killed), then per-server figures over all their
// turns. Turn 1 (the cold prefill) is left out of the per-turn medians and of the TTFT slope:
// they describe the growing conversation, not the first read.
#include <cmath>
#include <limits>
#include <sstream>
#include <thread>

#include "bench/endurance.h"
#include "bench/scenario.h"
#include "bench/stats.h"

namespace sf::bench {

namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

// Least-squares slope of y over x; NaN with fewer than 2 distinct x.
double slope(const std::vector<double> &x, const std::vector<double> &y) {
    const size_t n = std::min(x.size(), y.size());
    if (n < 2) return k_nan;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
    mx /= double(n), my /= double(n);
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < n; ++i)
        sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
    return sxx > 0 ? sxy / sxx : k_nan;
}

// Pooled per-turn samples of all trajectories (turns ≥ 2).
struct pooled {
    std::vector<double> ttft, prefilled, new_tokens, decode_tps;
    std::vector<double> slope_prompt, slope_ttft;  // turns with both (for the TTFT slope)
};

pooled pool(const std::vector<trajectory_record> &all) {
    pooled p;
    for (const auto &tr : all) {
        for (size_t i = 1; i < tr.turns.size(); ++i) {
            const turn_record &t = tr.turns[i], &prev = tr.turns[i - 1];
            if (t.error) continue;
            if (t.ttft_s >= 0) p.ttft.push_back(t.ttft_s);
            if (t.ttft_s >= 0 && t.prompt_tokens >= 0) {
                p.slope_ttft.push_back(t.ttft_s);
                p.slope_prompt.push_back(t.prompt_tokens);
            }
            if (t.prefilled() >= 0) p.prefilled.push_back(t.prefilled());
            if (t.prompt_tokens >= 0 && prev.prompt_tokens >= 0)
                p.new_tokens.push_back(t.prompt_tokens - prev.prompt_tokens);
            if (t.completion_tokens > 1 && t.ttft_s >= 0 && t.total_s > t.ttft_s)
                p.decode_tps.push_back((t.completion_tokens - 1) / (t.total_s - t.ttft_s));
        }
    }
    return p;
}

void interruption_figures(const interruption_record &ir, nlohmann::json &f) {
    if (!ir.happened) {
        f["interrupt_reattached"] = nullptr;
        return;
    }
    f["interrupt_reattached"] = ir.reattached ? 1 : 0;
    f["interrupt_killed"]     = ir.killed.empty() ? 0 : 1;
    f["interrupt_kill_ok"] =
        ir.killed.empty() ? nlohmann::json(nullptr) : nlohmann::json(ir.kill_error.empty() ? 1 : 0);
    f["interrupt_tokens_before_cut"] = ir.tokens_before_cut;
    f["interrupt_tokens_lost"]       = ir.tokens_lost;
    f["interrupt_tokens_duplicated"] = ir.tokens_duplicated;
    f["interrupt_server_prefilled"] =
        ir.server_prefilled >= 0 ? nlohmann::json(ir.server_prefilled) : nlohmann::json(nullptr);
    f["interrupt_prefill_recomputed"] = ir.prefill_recomputed;
    f["interrupt_decode_recomputed"]  = ir.decode_recomputed;
    f["interrupt_resume_s"]           = num(ir.resume_s);
    f["interrupt_consistent"]         = ir.consistent ? 1 : 0;
}

// The turns of all trajectories whose stream a kill broke (not the interrupted one), summed.
void broken_figures(const std::vector<trajectory_record> &all, nlohmann::json &f) {
    int n = 0, reattached = 0, lost = 0, prefill = 0, decode = 0;
    for (const auto &tr : all) {
        for (const auto &b : tr.broken) {
            ++n, reattached += b.reattached, lost += b.tokens_lost;
            prefill += b.prefill_recomputed, decode += b.decode_recomputed;
        }
    }
    f["broken_turns"]              = n;
    f["broken_turns_reattached"]   = reattached;
    f["broken_tokens_lost"]        = lost;
    f["broken_prefill_recomputed"] = prefill;
    f["broken_decode_recomputed"]  = decode;
}

// The kill at the interruption (--kill), when the bench owns the processes.
void arm_kill(scenario_context &ctx, trajectory_spec &spec, scenario_result &r) {
    const std::string kill = ctx.opts.endurance_kill;
    if (kill.empty()) return;
    if (!ctx.server.controlled()) {
        r.notes.push_back("--kill needs the bench to own the processes (--model, not --url)");
        return;
    }
    spec.kill   = kill;
    spec.on_cut = [&ctx, kill] {
        std::string err;
        // llama-server is one process: either kill is a kill of it and a restart.
        const bool ok = kill == "head" ? ctx.server.kill_head(err) : ctx.server.kill_engine(err);
        if (ok && !ctx.server.wait_healthy(300)) err = "no /health 200 after the kill";
        return ok ? err : (err.empty() ? "kill failed" : err);
    };
    if (ctx.server.spec().kind == server_kind::superfluid)
        spec.server_prefilled = [base = ctx.server.base_url()] {
            return static_cast<int>(superfluid_metric(base, "prompt_tokens_total"));
        };
}

}  // namespace

scenario_result run_endurance(scenario_context &ctx) {
    const auto &o = ctx.opts;
    scenario_result r;
    if (o.endurance_api == "ollama" && ctx.server.spec().kind == server_kind::llama_server) {
        // llama-server has no Ollama API (/api/chat answers 404): nothing to measure.
        r.notes.push_back("n/a: llama-server serves no Ollama API (/api/chat)");
        r.figures["api_served"] = 0;
        return r;
    }
    const int agents = std::max(1, o.agents);
    if (!o.endurance_kill.empty() && o.endurance_interrupt_at == 0)
        r.notes.push_back("--kill is done at the interruption: with --interrupt-at 0, no kill");
    std::vector<trajectory_record> all(static_cast<size_t>(agents));
    std::vector<std::thread> threads;
    ctx.prog.say(std::to_string(agents) + " trajectories of " + std::to_string(o.endurance_turns) +
                 " tool calls, " + o.endurance_api + " API");
    for (int a = 0; a < agents; ++a) {
        trajectory_spec spec;
        spec.agent        = a;
        spec.turns        = o.endurance_turns;
        spec.start_tokens = o.endurance_start_tokens;
        spec.system_bytes = o.agentic_system_bytes;
        spec.result_min   = o.endurance_result_min;
        spec.result_max   = o.endurance_result_max;
        spec.call_tokens  = o.endurance_call_tokens;
        spec.interrupt_at = a == 0 ? o.endurance_interrupt_at : 0;  // the first trajectory's
        spec.timeout_s    = o.request_timeout_s;
        spec.api          = o.endurance_api;
        if (a == 0 && spec.interrupt_at > 0) arm_kill(ctx, spec, r);
        // The other trajectories' streams a kill breaks are resumed, not counted as failures.
        spec.resume_broken =
            !o.endurance_kill.empty() && o.endurance_interrupt_at > 0 && ctx.server.controlled();
        threads.emplace_back([&all, &ctx, spec, base = ctx.server.base_url()] {
            all[static_cast<size_t>(spec.agent)] = run_trajectory(base, spec);
        });
    }
    for (auto &t : threads) t.join();
    if (!all[0].interruption.kill_error.empty())
        r.notes.push_back("kill " + o.endurance_kill + ": " + all[0].interruption.kill_error);

    int valid_min = o.endurance_turns, valid = 0, malformed = 0, truncated = 0, errors = 0;
    double wall = 0;
    for (const auto &tr : all) {
        int v = 0;
        for (const auto &t : tr.turns) {
            v += t.valid, malformed += t.malformed, truncated += t.truncated, errors += t.error;
            r.completion_tokens += std::max(0, t.completion_tokens);
            if (t.error) r.notes.push_back("a turn failed: " + t.error_text);
        }
        valid_min = std::min(valid_min, v);
        valid += v;
        wall = std::max(wall, tr.wall_s);
    }
    const pooled p             = pool(all);
    auto &f                    = r.figures;
    f["api_served"]            = 1;
    f["calls"]                 = o.endurance_turns;
    f["schema_valid_calls"]    = valid_min;  // the worst trajectory's
    f["schema_valid_fraction"] = num(double(valid) / double(agents * o.endurance_turns));
    f["malformed_calls"]       = malformed;
    f["truncated_calls"]       = truncated;
    f["errors"]                = errors;
    f["wall_s"]                = num(wall);
    const auto &t0             = all[0].turns;
    // Prompt totals are unknown where the API reports only what it computed (Ollama).
    auto tokens_or_null = [](int n) {
        return n >= 0 ? nlohmann::json(n) : nlohmann::json(nullptr);
    };
    f["context_tokens_first"] =
        t0.empty() ? nlohmann::json(nullptr) : tokens_or_null(t0.front().prompt_tokens);
    f["context_tokens_last"] =
        t0.empty() ? nlohmann::json(nullptr) : tokens_or_null(t0.back().prompt_tokens);
    f["ttft_first_s"]              = t0.empty() ? nlohmann::json(nullptr) : num(t0.front().ttft_s);
    f["ttft_s"]                    = num(median(p.ttft));
    f["ttft_slope_s_per_10k"]      = num(slope(p.slope_prompt, p.slope_ttft) * 10000);
    f["prefilled_tokens_per_turn"] = num(median(p.prefilled));
    f["new_tokens_per_turn"]       = num(median(p.new_tokens));
    const double ratio             = median(p.prefilled) / median(p.new_tokens);
    f["prefilled_over_new"]        = num(ratio);
    f["decode_tokens_per_s"]       = num(median(p.decode_tps));
    interruption_figures(all[0].interruption, f);
    if (!o.endurance_kill.empty()) broken_figures(all, f);
    // The first trajectory turn by turn, for the report's charts.
    for (const auto &t : t0) {
        r.samples["turns"].push_back({{"tool", t.tool},
                                      {"named", t.named},
                                      {"finish_reason", t.finish_reason},
                                      {"completion_tokens", t.completion_tokens},
                                      {"valid", t.valid},
                                      {"problem", t.error_text}});
        r.samples["ttft_by_turn"].push_back(num(t.ttft_s));
        r.samples["prefilled_by_turn"].push_back(t.prefilled() >= 0 ? nlohmann::json(t.prefilled())
                                                                    : nlohmann::json(nullptr));
        r.samples["prompt_by_turn"].push_back(t.prompt_tokens >= 0 ? nlohmann::json(t.prompt_tokens)
                                                                   : nlohmann::json(nullptr));
    }
    return r;
}

}  // namespace sf::bench
