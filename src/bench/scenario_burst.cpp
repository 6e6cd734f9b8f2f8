// Scenario `burst`: N requests fired within a short window; latency distribution, FIFO flag.
#include <algorithm>
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
        std::vector<std::pair<double, int>> edges;  // generating intervals: +1 first token, -1 end
        for (const auto &s : res) {
            wall = std::max(wall, s.sent_at + s.total_s - t0);
            if (!s.ok) {
                ++errors;
                continue;
            }
            tokens += std::max(0, s.tokens());
            lat.push_back(s.total_s);
            if (s.ttft_s >= 0) {
                edges.emplace_back(s.sent_at + s.ttft_s, 1);
                edges.emplace_back(s.sent_at + s.total_s, -1);
            }
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
        // FIFO serialization: one answer generating at a time (the next one's first token only
        // after the previous one's end). The peak number of answers generating together, from
        // their [first token, end] intervals (an end sorts before a first token at the same
        // instant).
        std::sort(edges.begin(), edges.end());
        int live = 0, peak = 0;
        for (const auto &e : edges) peak = std::max(peak, live += e.second);
        b["peak_generating"]                      = peak;
        b["fifo"]                                 = lat.size() >= 3 && peak <= 1 ? 1 : 0;
        r.figures["burst"][std::to_string(n)]     = b;
        r.samples["latency_s"][std::to_string(n)] = lat;
    }
    return r;
}

}  // namespace sf::bench
