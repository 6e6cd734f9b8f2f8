// Scenario `prefix`: requests sharing a long system prompt — sequential, concurrent, a
// mid-conversation edit, and after a restart. Hit rate from the server's own usage report.
#include <atomic>

#include "bench/scenario.h"
#include "bench/stats.h"
#include "bench/workload.h"

namespace sf::bench {

namespace {

// Tokens the chat template puts between two messages (Qwen: <|im_end|>\n<|im_start|>role\n),
// used to estimate the shared prefix; approximate by a few tokens.
constexpr int kTemplateTokensPerMessage = 5;
// Tokens of question(): 12 words and "?" (its "Question:" head is shared).
constexpr int kQuestionTokens = 13;

struct workload {
    std::vector<nlohmann::json> requests;
    std::vector<int> distinct_tokens;  // estimated tokens after the shared prefix, per request
};

std::string question(uint64_t seed) {
    return "Question: " + words(seed, 12) + "?";
}

workload shared_system(uint64_t seed, const bench_options &o) {
    workload w;
    std::string sys = "You are a helpful assistant.\n\n" + document(seed, o.prefix_tokens);
    for (int i = 0; i < o.prefix_requests; ++i) {
        nlohmann::json msgs = {{{"role", "system"}, {"content", sys}},
                               {{"role", "user"}, {"content", question(seed * 100 + i)}}};
        w.requests.push_back(chat_body(msgs, o.short_tokens, i));  // a seed each (http_client.h)
        // The question, then the assistant header.
        w.distinct_tokens.push_back(kQuestionTokens + kTemplateTokensPerMessage);
    }
    return w;
}

// A conversation whose second user message changes from request to request.
workload edited_conversation(uint64_t seed, const bench_options &o) {
    workload w;
    std::string sys = "You are a helpful assistant.\n\n" + document(seed, o.prefix_tokens);
    for (int i = 0; i < o.prefix_requests; ++i) {
        nlohmann::json msgs = {{{"role", "system"}, {"content", sys}},
                               {{"role", "user"}, {"content", words(seed + 1, 60)}},
                               {{"role", "assistant"}, {"content", words(seed + 2, 60)}},
                               {{"role", "user"}, {"content", words(seed * 100 + i, 60)}},
                               {{"role", "assistant"}, {"content", words(seed + 3, 40)}},
                               {{"role", "user"}, {"content", question(seed * 200 + i)}}};
        w.requests.push_back(chat_body(msgs, o.short_tokens, i));  // a seed each (http_client.h)
        // From the edited message on: its words, the assistant reply, the question, 3 headers.
        w.distinct_tokens.push_back(60 + 40 + kQuestionTokens + 3 * kTemplateTokensPerMessage);
    }
    return w;
}

/**
 * Figures of one variant. `reusable_first`: whether even the first request could reuse its
 * prefix (after a restart with a persistent cache).
 */
nlohmann::json variant_figures(const workload &w, const std::vector<stream_result> &res,
                               bool reusable_first, long &tokens, int &errors) {
    double prompt = 0, cached = 0, reusable = 0;
    long unshown = 0;  // tokens without a visible chunk of their own (held whitespace, …)
    std::vector<double> rest;
    bool usage = true;
    for (size_t i = 0; i < res.size(); ++i) {
        const auto &s = res[i];
        if (!s.ok) ++errors;
        tokens += std::max(0, s.tokens());
        if (i > 0) unshown += std::max<long>(0, s.tokens() - static_cast<long>(s.pieces.size()));
        if (s.prompt_tokens < 0) {
            usage = false;
            continue;
        }
        prompt += s.prompt_tokens;
        cached += std::max(0, s.cached_tokens);
        if (i > 0 || reusable_first)
            reusable += std::max(0, s.prompt_tokens - w.distinct_tokens[i]);
        if (i > 0 && s.ttft_s >= 0) rest.push_back(s.ttft_s);
    }
    nlohmann::json v;
    v["hit_rate"]       = usage && prompt > 0 ? num(cached / prompt) : nullptr;
    v["hit_rate_max"]   = usage && prompt > 0 ? num(reusable / prompt) : nullptr;
    v["prompt_tokens"]  = prompt;
    v["cached_tokens"]  = cached;
    v["ttft_first_s"]   = !res.empty() && res[0].ttft_s >= 0 ? num(res[0].ttft_s) : nullptr;
    v["ttft_rest_s"]    = num(median(rest));
    v["unshown_tokens"] = unshown;
    return v;
}

std::vector<stream_result> sequential(scenario_context &ctx, const workload &w,
                                      const std::string &label) {
    std::vector<stream_result> out;
    for (size_t i = 0; i < w.requests.size(); ++i) {
        ctx.prog.say(label + " " + std::to_string(i + 1) + "/" + std::to_string(w.requests.size()));
        out.push_back(post_chat_stream(ctx.server.base_url(), w.requests[i], req_opts(ctx)));
    }
    return out;
}

// `c` clients, each taking the next request when its previous one is done.
std::vector<stream_result> concurrent(scenario_context &ctx, const workload &w, int c) {
    std::vector<stream_result> out(w.requests.size());
    std::atomic<size_t> next{0};
    ctx.prog.say("concurrent x" + std::to_string(c));
    run_concurrent(c, [&](int) {
        for (size_t i; (i = next++) < w.requests.size();)
            out[i] = post_chat_stream(ctx.server.base_url(), w.requests[i], req_opts(ctx));
        return stream_result{};
    });
    return out;
}

}  // namespace

scenario_result run_prefix(scenario_context &ctx) {
    const auto &o = ctx.opts;
    scenario_result r;
    warm_up(ctx);
    int errors = 0;
    auto &v    = r.figures["variants"];

    workload seq    = shared_system(101, o);
    v["sequential"] = variant_figures(seq, sequential(ctx, seq, "sequential"), false,
                                      r.completion_tokens, errors);
    workload conc   = shared_system(202, o);
    v["concurrent"] = variant_figures(conc, concurrent(ctx, conc, o.prefix_concurrency), false,
                                      r.completion_tokens, errors);
    workload edit   = edited_conversation(303, o);
    v["edit"] =
        variant_figures(edit, sequential(ctx, edit, "edit"), false, r.completion_tokens, errors);
    if (ctx.server.controlled()) {
        ctx.prog.say("restart");
        std::string err;
        if (ctx.server.restart(err)) {
            // The sequential workload again: a persistent cache could serve even the first.
            v["restart"] = variant_figures(seq, sequential(ctx, seq, "after restart"), true,
                                           r.completion_tokens, errors);
        } else {
            r.notes.push_back("restart failed: " + err);
        }
    } else {
        r.notes.push_back("variant `restart` skipped: the server is not ours to restart (--url)");
    }
    for (const char *k : {"sequential", "concurrent", "edit", "restart"})
        if (!v.contains(k)) v[k] = nullptr;
    r.figures["errors"] = errors;
    r.notes.push_back(
        "hit_rate_max estimates the shared prefix as prompt_tokens minus the "
        "distinct part (words ≈ tokens), accurate to a few tokens");
    return r;
}

}  // namespace sf::bench
