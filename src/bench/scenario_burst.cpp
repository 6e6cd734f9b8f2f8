// Scenario `burst`: N requests fired within a short window; latency distribution, FIFO flag.
#include "bench/scenario.h"
#include "bench/stats.h"
#include "bench/workload.h"

namespace sf::bench {

scenario_result run_burst(scenario_context &ctx) {
    const auto &o = ctx.opts;
    scenario_result r;
    warm_up(ctx);
    for (int n : o.burst_sizes) {
        ctx.prog.say("burst of " + std::to_string(n));
        double t0 = now_s();
        auto res  = run_concurrent(
             n,
             [&](int i) {
                nlohmann::json msgs = {
                    {{"role", "user"},
                     {"content",
                      "Reply briefly: " + words(static_cast<uint64_t>(n * 100 + i), 8)}}};
                return post_chat_stream(ctx.server.base_url(), chat_body(msgs, o.burst_tokens),
                                         req_opts(ctx));
            },
             [&](int i) { return o.burst_window_s * i / std::max(1, n); });
        double wall = 0;
        long tokens = 0;
        int errors  = 0;
        std::vector<double> lat;
        for (const auto &s : res) {
            wall = std::max(wall, s.sent_at + s.total_s - t0);
            if (!s.ok) {
                ++errors;
                continue;
            }
            tokens += std::max(0, s.tokens());
            lat.push_back(s.total_s);
        }
        r.completion_tokens += tokens;
        double p50 = percentile(lat, 50), p95 = percentile(lat, 95), mx = percentile(lat, 100);
        nlohmann::json b;
        b["wall_s"]       = num(wall);
        b["p50_s"]        = num(p50);
        b["p95_s"]        = num(p95);
        b["max_s"]        = num(mx);
        b["tokens_per_s"] = wall > 0 ? num(static_cast<double>(tokens) / wall) : nullptr;
        b["errors"]       = errors;
        // Everyone waiting as long as the slowest: p50 ≈ p95 ≈ max (within 10 %).
        b["fifo"] = lat.size() >= 3 && mx > 0 && (mx - p50) <= 0.1 * mx ? 1 : 0;
        r.figures["burst"][std::to_string(n)]     = b;
        r.samples["latency_s"][std::to_string(n)] = lat;
    }
    return r;
}

}  // namespace sf::bench
