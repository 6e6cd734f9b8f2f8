#include "bench/scenario.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace sf::bench {

progress::progress(bool enabled) : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0) {}

void progress::say(const std::string &msg) {
    if (!enabled_) return;
    std::string line = prefix_.empty() ? msg : prefix_ + ": " + msg;
    if (tty_) {
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
    } else {
        std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
}

void progress::done() {
    if (enabled_ && tty_) std::fprintf(stderr, "\n");
}

scenario_fn find_scenario(const std::string &name) {
    if (name == "priority") return run_priority;
    if (name == "recovery") return run_recovery;
    if (name == "prefix") return run_prefix;
    if (name == "throughput") return run_throughput;
    if (name == "agentic") return run_agentic;
    if (name == "burst") return run_burst;
    if (name == "endurance") return run_endurance;
    if (name == "cluster") return run_cluster;
    return nullptr;
}

std::vector<stream_result> run_concurrent(int n, const std::function<stream_result(int)> &request,
                                          const std::function<double(int)> &start_at) {
    std::vector<stream_result> out(static_cast<size_t>(n));
    std::vector<std::thread> threads;
    double t0 = now_s();
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            if (start_at) {
                double wait = t0 + start_at(i) - now_s();
                if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
            }
            out[static_cast<size_t>(i)] = request(i);
        });
    }
    for (auto &t : threads) t.join();
    return out;
}

request_options req_opts(const scenario_context &ctx, const std::string &priority) {
    request_options o;
    o.timeout_s = ctx.opts.request_timeout_s;
    o.priority  = priority;
    return o;
}

void warm_up(scenario_context &ctx) {
    ctx.prog.say("warm-up");
    nlohmann::json msgs = {{{"role", "user"}, {"content", "Say hello."}}};
    post_chat_stream(ctx.server.base_url(), chat_body(msgs, 4), req_opts(ctx));
}

}  // namespace sf::bench
