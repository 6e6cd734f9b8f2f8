// Scenario `agentic`: cold / warm / prefix-test-1..3 / cold-prefix TTFT and reuse verdicts.
#include <cmath>
#include <limits>

#include "bench/scenario.h"
#include "bench/stats.h"
#include "bench/workload.h"

namespace sf::bench {

namespace {

// The ratio under which a phase counts as served from a cache.
constexpr double kReuseRatio = 0.2;

// YES when `phase` seconds are under kReuseRatio of `cold`; null when either is unknown.
nlohmann::json verdict(double phase, double cold) {
    if (std::isnan(phase) || std::isnan(cold) || cold <= 0) return nullptr;
    return phase / cold < kReuseRatio ? "YES" : "NO";
}

double median_of(const nlohmann::json &f, const char *key) {
    if (!f.contains(key) || !f[key].is_object() || !f[key].contains("median") ||
        !f[key]["median"].is_number())
        return std::numeric_limits<double>::quiet_NaN();
    return f[key]["median"].get<double>();
}

}  // namespace

void agentic_verdicts_from_medians(nlohmann::json &figures) {
    const double cold = median_of(figures, "ttft_cold_s");
    if (figures.contains("verdict_prefix"))
        figures["verdict_prefix"] = verdict(median_of(figures, "ttft_prefix_s"), cold);
    if (figures.contains("verdict_persistent") && !figures["verdict_persistent"].is_null())
        figures["verdict_persistent"] = verdict(median_of(figures, "ttft_cold_prefix_s"), cold);
}

scenario_result run_agentic(scenario_context &ctx) {
    const auto &o = ctx.opts;
    scenario_result r;
    // No warm-up: `cold` is the first call after start.
    std::string sys = "You are a coding agent. Follow the rules below.\n\n" +
                      text_of_bytes(4242, o.agentic_system_bytes);
    // `seed_offset`: each distinct request its own seed (chat_body, http_client.h).
    auto ask = [&](const std::string &phase, const std::string &user, int seed_offset) {
        ctx.prog.say(phase);
        nlohmann::json msgs = {{{"role", "system"}, {"content", sys}},
                               {{"role", "user"}, {"content", user}}};
        stream_result s     = post_chat_stream(
                ctx.server.base_url(), chat_body(msgs, o.short_tokens, seed_offset), req_opts(ctx));
        r.completion_tokens += std::max(0, s.tokens());
        if (!s.ok) r.notes.push_back(phase + " failed: " + s.error);
        r.samples["cached_tokens"][phase] = s.cached_tokens;
        return s.ttft_s >= 0 ? s.ttft_s : std::numeric_limits<double>::quiet_NaN();
    };
    double cold = ask("cold", "List the files in the repository.", 0);
    double warm = ask("warm", "List the files in the repository.", 0);  // the same request
    std::vector<double> prefix;
    for (int i = 1; i <= 3; ++i)
        prefix.push_back(ask("prefix-test-" + std::to_string(i),
                             "Task " + std::to_string(i) + ": " + words(77 + i, 10) + ".", i));
    double cold_prefix = std::numeric_limits<double>::quiet_NaN();
    if (ctx.server.controlled()) {
        ctx.prog.say("restart");
        std::string err;
        if (ctx.server.restart(err)) {
            cold_prefix = ask("cold-prefix", "Task 4: " + words(81, 10) + ".", 4);
        } else {
            r.notes.push_back("restart failed: " + err);
        }
    } else {
        r.notes.push_back("phase cold-prefix skipped: the server is not ours to restart (--url)");
    }
    auto &f                 = r.figures;
    double pm               = median(prefix);
    f["ttft_cold_s"]        = num(cold);
    f["ttft_warm_s"]        = num(warm);
    f["ttft_prefix_s"]      = num(pm);
    f["ttft_prefix_1_s"]    = num(prefix[0]);
    f["ttft_prefix_2_s"]    = num(prefix[1]);
    f["ttft_prefix_3_s"]    = num(prefix[2]);
    f["ttft_cold_prefix_s"] = num(cold_prefix);
    f["verdict_prefix"]     = verdict(pm, cold);
    // Without a restart (--url) there is no persistent-cache verdict.
    f["verdict_persistent"] = verdict(cold_prefix, cold);
    return r;
}

}  // namespace sf::bench
