// Scenario `priority`: N batch agents summarizing long documents; one interactive chat at T s.
// With --unmarked no request says its class (no body field, no header, no key): the server
// must tell the chat from the agents by itself (issue #18). --launch-key agents|chat gives the
// agents or the chat the key `superfluid launch` sets (identity only, no class): issue #36's
// mixes (b) and (c).
#include <atomic>
#include <chrono>
#include <thread>

#include "bench/scenario.h"
#include "bench/stats.h"
#include "bench/workload.h"

namespace sf::bench {

namespace {

nlohmann::json chat_messages() {
    return {{{"role", "user"}, {"content", "What is the capital of France? Answer in one line."}}};
}

}  // namespace

scenario_result run_priority(scenario_context &ctx) {
    const auto &o = ctx.opts;
    scenario_result r;
    warm_up(ctx);
    const std::string chat_cls  = o.unmarked ? "" : "interactive";
    const std::string agent_cls = o.unmarked ? "" : "batch";
    const std::string launch    = "sk-superfluid-claude";  // launch/launch_agents.cpp's key
    auto chat_opts              = [&] {
        request_options ro = req_opts(ctx, chat_cls);
        if (o.launch_key == "chat") ro.api_key = launch;
        return ro;
    };
    auto agent_opts = [&] {
        request_options ro = req_opts(ctx, agent_cls);
        if (o.launch_key == "agents") ro.api_key = launch;
        return ro;
    };

    // The same chat question on the idle server: the baseline for chat_ttft_s.
    ctx.prog.say("idle chat");
    stream_result idle = post_chat_stream(
        ctx.server.base_url(), chat_body(chat_messages(), o.chat_max_tokens), chat_opts());

    std::atomic<int> finished{0};
    double t0 = now_s();
    std::vector<double> done_at(static_cast<size_t>(o.agents), 0);
    std::thread agents_thread;
    std::vector<stream_result> agents;
    agents_thread = std::thread([&] {
        agents = run_concurrent(o.agents, [&](int i) {
            nlohmann::json msgs = {
                {{"role", "system"}, {"content", "You summarize documents."}},
                {{"role", "user"},
                 {"content", "Summarize the following document.\n\n" +
                                 document(1000 + static_cast<uint64_t>(i), o.doc_tokens)}}};
            stream_result s                 = post_chat_stream(ctx.server.base_url(),
                                                               chat_body(msgs, o.agent_max_tokens), agent_opts());
            done_at[static_cast<size_t>(i)] = now_s() - t0;
            ++finished;
            return s;
        });
    });

    std::this_thread::sleep_for(std::chrono::duration<double>(o.chat_at_s));
    ctx.prog.say("chat during " + std::to_string(o.agents) + " agents");
    stream_result chat = post_chat_stream(
        ctx.server.base_url(), chat_body(chat_messages(), o.chat_max_tokens), chat_opts());
    ctx.prog.say("chat answered; agents done " + std::to_string(finished.load()) + "/" +
                 std::to_string(o.agents));
    agents_thread.join();

    long tokens = 0;
    int errors  = 0;
    double last = 0;
    std::vector<double> completion;
    for (size_t i = 0; i < agents.size(); ++i) {
        tokens += std::max(0, agents[i].tokens());
        if (!agents[i].ok) ++errors;
        completion.push_back(done_at[i]);
        last = std::max(last, done_at[i]);
    }
    r.completion_tokens         = tokens + std::max(0, chat.tokens());
    auto &f                     = r.figures;
    f["chat_ttft_s"]            = chat.ttft_s >= 0 ? num(chat.ttft_s) : nullptr;
    f["chat_ttft_idle_s"]       = idle.ttft_s >= 0 ? num(idle.ttft_s) : nullptr;
    f["chat_total_s"]           = num(chat.total_s);
    f["chat_errors"]            = chat.ok ? 0 : 1;
    f["agents_tokens_per_s"]    = last > 0 ? num(static_cast<double>(tokens) / last) : nullptr;
    f["agent_completion_p50_s"] = num(median(completion));
    f["agent_completion_max_s"] = num(percentile(completion, 100));
    f["agents_errors"]          = errors;
    f["unmarked"]               = o.unmarked ? 1 : 0;
    r.notes.push_back("launch key: " + (o.launch_key.empty() ? std::string("none") : o.launch_key));
    r.samples["agent_completion_s"] = completion;
    if (!chat.ok) r.notes.push_back("chat request failed: " + chat.error);
    if (errors) r.notes.push_back(std::to_string(errors) + " agent request(s) failed");
    return r;
}

}  // namespace sf::bench
