#include "bench/journal_cost.h"

#include "bench/stats.h"
#include "bench/workload.h"

namespace sf::bench {

namespace {

struct journal_mode {
    const char *name;
    std::vector<std::string> args;
};

}  // namespace

void measure_journal_cost(scenario_context &ctx, scenario_result &r) {
    const auto &o                         = ctx.opts;
    const std::vector<journal_mode> modes = {{"journal_off", {"--journal", "off"}},
                                             {"sync_off", {"--journal-sync", "off"}},
                                             {"sync_normal", {"--journal-sync", "normal"}},
                                             {"sync_full", {"--journal-sync", "full"}}};
    if (ctx.server.spec().kind != server_kind::superfluid) {
        r.figures["journal"] = nullptr;
        return;
    }
    const int c      = std::max(1, o.parallel);
    double off_rate  = 0;
    nlohmann::json j = nlohmann::json::object();
    for (const auto &m : modes) {
        ctx.prog.say(std::string("journal cost: ") + m.name);
        ctx.server.set_extra_args(m.args);
        std::string err;
        if (!ctx.server.restart(err)) {
            r.notes.push_back(std::string("journal cost, ") + m.name + ": " + err);
            j[m.name] = {{"tokens_per_s", nullptr}, {"vs_off", nullptr}};
            continue;
        }
        warm_up(ctx);
        double t0   = now_s();
        auto res    = run_concurrent(c, [&](int i) {
            nlohmann::json msgs = {{{"role", "user"},
                                    {"content", "Continue this list of words: " +
                                                    words(static_cast<uint64_t>(7000 + i), 24)}}};
            return post_chat_stream(ctx.server.base_url(), chat_body(msgs, o.throughput_tokens),
                                       req_opts(ctx));
        });
        double wall = now_s() - t0;
        long tokens = 0;
        for (const auto &s : res) tokens += std::max(0, s.tokens());
        double rate = wall > 0 ? static_cast<double>(tokens) / wall : 0;
        if (std::string(m.name) == "journal_off") off_rate = rate;
        j[m.name] = {{"tokens_per_s", num(rate)},
                     {"vs_off", off_rate > 0 ? num(rate / off_rate) : nlohmann::json(nullptr)}};
    }
    r.figures["journal"] = j;
    r.notes.push_back("journal: tokens/s at concurrency " + std::to_string(c) + ", " +
                      std::to_string(o.throughput_tokens) +
                      " tokens each, one server restart per mode; vs_off = tokens/s relative "
                      "to --journal off");
    ctx.server.set_extra_args({});
    std::string err;
    ctx.server.restart(err);
}

}  // namespace sf::bench
