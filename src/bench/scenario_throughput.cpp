// Scenario `throughput`: concurrency levels; aggregate decode tokens/s, TTFT and ITL; then
// the journal's cost (bench/journal_cost.h).
#include "bench/journal_cost.h"
#include "bench/scenario.h"
#include "bench/stats.h"
#include "bench/workload.h"

#include <thread>

namespace sf::bench {

scenario_result run_throughput(scenario_context &ctx) {
    const auto &o = ctx.opts;
    scenario_result r;
    warm_up(ctx);
    std::vector<double> all_ttft, all_itl;
    int errors = 0;
    for (int c : o.concurrency) {
        ctx.prog.say("concurrency " + std::to_string(c));
        // C clients, each sending `rounds` requests one after another: a level lasts long enough
        // (at C = 1, one 128-token answer is half a second) for a tokens/s figure to mean more
        // than the noise of one request.
        const int rounds = std::max(1, o.throughput_rounds);
        std::vector<std::vector<stream_result>> per_client(static_cast<size_t>(c));
        double t0 = now_s();
        std::vector<std::thread> clients;
        for (int i = 0; i < c; ++i) {
            clients.emplace_back([&, i] {
                for (int k = 0; k < rounds; ++k) {
                    nlohmann::json msgs = {
                        {{"role", "user"},
                         {"content",
                          "Continue this list of words: " +
                              words(static_cast<uint64_t>(c * 1000 + k * 100 + i), 24)}}};
                    auto body           = chat_body(msgs, o.throughput_tokens);
                    body["temperature"] = o.throughput_temperature;
                    per_client[static_cast<size_t>(i)].push_back(
                        post_chat_stream(ctx.server.base_url(), body, req_opts(ctx)));
                }
            });
        }
        for (auto &t : clients) t.join();
        double wall = now_s() - t0;
        std::vector<stream_result> res;
        for (auto &mine : per_client) res.insert(res.end(), mine.begin(), mine.end());
        long tokens = 0, drafted = 0, accepted = 0;
        std::vector<double> ttft, itl, decode;
        for (const auto &s : res) {
            if (!s.ok) ++errors;
            drafted += s.draft_n;
            accepted += s.draft_n_accepted;
            tokens += std::max(0, s.tokens());
            if (s.ttft_s >= 0) ttft.push_back(s.ttft_s);
            for (size_t k = 1; k < s.token_times.size(); ++k)
                itl.push_back(s.token_times[k] - s.token_times[k - 1]);
            // The request's decode rate, first token to last: a relay that delivers tokens at
            // scheduler ticks moves single gaps (the ITL median) but not this.
            if (const double rate = s.decode_tokens_per_s(); s.ok && rate > 0)
                decode.push_back(rate);
        }
        r.completion_tokens += tokens;
        std::string sfx         = "_c" + std::to_string(c);
        auto &f                 = r.figures;
        f["tokens_per_s" + sfx] = wall > 0 ? num(static_cast<double>(tokens) / wall) : nullptr;
        f["ttft_p50_s" + sfx]   = num(percentile(ttft, 50));
        f["ttft_p95_s" + sfx]   = num(percentile(ttft, 95));
        f["itl_p50_s" + sfx]    = num(percentile(itl, 50));
        f["itl_p95_s" + sfx]    = num(percentile(itl, 95));
        f["decode_tokens_per_s" + sfx] = decode.empty() ? nullptr : num(percentile(decode, 50));
        if (drafted > 0) {  // speculative decoding (bench --spec-type): the servers' own counts
            f["draft_tokens" + sfx]     = drafted;
            f["draft_acceptance" + sfx] = num(static_cast<double>(accepted) / drafted);
        }
        all_ttft.insert(all_ttft.end(), ttft.begin(), ttft.end());
        all_itl.insert(all_itl.end(), itl.begin(), itl.end());
        r.samples["ttft_s" + sfx] = ttft;
    }
    // Pooled over every level.
    r.figures["ttft_p50_s"] = num(percentile(all_ttft, 50));
    r.figures["ttft_p95_s"] = num(percentile(all_ttft, 95));
    r.figures["itl_p50_s"]  = num(percentile(all_itl, 50));
    r.figures["itl_p95_s"]  = num(percentile(all_itl, 95));
    r.figures["errors"]     = errors;
    if (ctx.server.controlled() && o.journal_cost) measure_journal_cost(ctx, r);
    return r;
}

}  // namespace sf::bench
