// Scenario `cluster` (issue #17): one machine, loopback only. The same requests on a plain
// `serve` (the worker over its unix socket) and through a routing-only cluster head whose one
// guest runs them (`serve --cluster --no-local-worker` + `join`): tokens/s and TTFT on both and
// their ratios (the link's overhead); the TCP bytes between the head and the guest's worker port
// per generated token; then two other guests (half the cores each) run seeded streams, and the
// one running the most of them is SIGKILLed mid-stream: the gap each moved stream sees, and
// that every stream completes with each journaled token delivered once.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>

#include "bench/loopback_cluster.h"
#include "bench/scenario.h"
#include "bench/stats.h"
#include "bench/workload.h"

namespace sf::bench {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Tokens after the kill searched for the stall (as in `recovery`).
constexpr int kStallWindow = 64;

/** One concurrency level: C clients, each sending `rounds` requests in turn. */
struct level_stats {
    long tokens = 0;
    double wall = 0;
    std::vector<double> ttft, decode;  // per request: TTFT; (tokens − 1) / (last − first token)
    int errors = 0;
};

/** Level C on `base`: seeded word-list prompts, ignore_eos answers of --cluster-tokens. */
level_stats run_level(const scenario_context &ctx, const std::string &base, int c) {
    const auto &o = ctx.opts;
    std::vector<std::vector<stream_result>> per_client(static_cast<size_t>(c));
    const double t0 = now_s();
    std::vector<std::thread> clients;
    for (int i = 0; i < c; ++i) {
        clients.emplace_back([&, i] {
            for (int k = 0; k < std::max(1, o.cluster_rounds); ++k) {
                json msgs = {
                    {{"role", "user"},
                     {"content",
                      "Continue this list of words: " +
                          words(static_cast<uint64_t>(7000 + c * 1000 + k * 100 + i), 24)}}};
                json body          = chat_body(msgs, o.cluster_tokens);
                body["ignore_eos"] = true;  // every answer is max_tokens long, on both sides
                per_client[static_cast<size_t>(i)].push_back(
                    post_chat_stream(base, body, req_opts(ctx)));
            }
        });
    }
    for (auto &t : clients) t.join();
    level_stats l;
    l.wall = now_s() - t0;
    for (const auto &mine : per_client) {
        for (const auto &s : mine) {
            if (!s.ok) ++l.errors;
            l.tokens += std::max(0, s.tokens());
            if (s.ttft_s >= 0) l.ttft.push_back(s.ttft_s);
            if (const double rate = s.decode_tokens_per_s(); rate > 0) l.decode.push_back(rate);
        }
    }
    return l;
}

/** The concurrency levels: 1 and --cluster-concurrency (resolve_defaults: --parallel). */
std::vector<int> levels(const bench_options &o) {
    const int n = o.cluster_concurrency;
    return n > 1 ? std::vector<int>{1, n} : std::vector<int>{1};
}

/** A short request on `base`, not measured (the first request pays one-time costs). */
void warm(scenario_context &ctx, const std::string &base, const std::string &side) {
    ctx.prog.say(side + ": warm-up");
    post_chat_stream(base, chat_body({{{"role", "user"}, {"content", "Say hello."}}}, 4),
                     req_opts(ctx));
}

/** Every level on `base`: the figures of one side; adds its completion tokens to `tokens`. */
json measure_levels(scenario_context &ctx, const std::string &base, const std::string &side,
                    long &tokens) {
    json f     = json::object();
    int errors = 0;
    for (int c : levels(ctx.opts)) {
        ctx.prog.say(side + ": concurrency " + std::to_string(c));
        const level_stats l            = run_level(ctx, base, c);
        const std::string sfx          = "_c" + std::to_string(c);
        f["tokens_per_s" + sfx]        = l.wall > 0 ? num(double(l.tokens) / l.wall) : nullptr;
        f["decode_tokens_per_s" + sfx] = num(median(l.decode));
        f["ttft_p50_s" + sfx]          = num(median(l.ttft));
        errors += l.errors;
        tokens += l.tokens;
    }
    f["errors"] = errors;
    return f;
}

/** guest / local for each level's figures (the link's overhead; 1 = none). */
json link_ratios(const json &local, const json &guest, const bench_options &o) {
    json r     = json::object();
    auto ratio = [&](const std::string &key) {
        const json a = guest.is_object() ? guest.value(key, json()) : json();
        const json b = local.is_object() ? local.value(key, json()) : json();
        return a.is_number() && b.is_number() && b.get<double>() != 0
                   ? num(a.get<double>() / b.get<double>())
                   : json(nullptr);
    };
    for (int c : levels(o)) {
        const std::string sfx  = "_c" + std::to_string(c);
        r["rate" + sfx]        = ratio("tokens_per_s" + sfx);
        r["decode_rate" + sfx] = ratio("decode_tokens_per_s" + sfx);
        r["first_token" + sfx] = ratio("ttft_p50_s" + sfx);
    }
    return r;
}

/** An OpenAI chat stream read as usual, plus the index of each SSE `id: <session>:<index>`. */
class id_feeder : public stream_feeder {
  public:
    id_feeder(stream_result &out, std::vector<long> &ids) : sse_(out), ids_(ids) {}
    void feed(const char *data, size_t len, double t) override {
        sse_.feed(data, len, t);
        split_lines(buf_, data, len, [&](const std::string &l) {
            if (l.rfind("id:", 0) == 0) ids_.push_back(std::atol(l.c_str() + l.rfind(':') + 1));
        });
    }

  private:
    sse_reader sse_;
    std::vector<long> &ids_;
    std::string buf_;
};

/** Node-loss stream `i`: seeded (temperature 1, its own seed), ignore_eos, --stream-tokens. */
json loss_body(const bench_options &o, int i) {
    json b = chat_body(
        {{{"role", "user"}, {"content", "Tell story " + std::to_string(i) + " about the sea."}}},
        o.stream_tokens);
    b["seed"]           = 900 + i;
    b["ignore_eos"]     = true;
    b["stream_options"] = {{"include_usage", true}};
    return b;
}

/** One node-loss stream as received: the stream and its SSE ids. */
struct loss_stream {
    stream_result r;
    std::vector<long> ids;
    std::string text() const {
        std::string t;
        for (const auto &p : r.pieces) t += p;
        return t;
    }
};

/** The node-loss streams at once; `on_token(i)` after each token event of stream i. */
std::vector<loss_stream> run_loss_streams(const scenario_context &ctx, const std::string &base,
                                          const std::function<void(int)> &on_token = nullptr) {
    const int k = std::max(1, ctx.opts.cluster_streams);
    std::vector<loss_stream> out(static_cast<size_t>(k));
    std::vector<stream_result> res = run_concurrent(k, [&](int i) {
        request_options ro = req_opts(ctx);
        if (on_token) ro.on_token = [&on_token, i](int, double) { on_token(i); };
        std::vector<long> &ids = out[static_cast<size_t>(i)].ids;
        return post_stream(
            base, "/v1/chat/completions", loss_body(ctx.opts, i), ro,
            [&ids](stream_result &r) { return std::make_unique<id_feeder>(r, ids); });
    });
    for (size_t i = 0; i < out.size(); ++i) out[i].r = std::move(res[i]);
    return out;
}

/** The kill of the node-loss phase: which guest, its sessions then, when (now_s(); 0: none). */
struct kill_record {
    std::string node;
    int sessions = 0;
    double at    = 0;
};

/**
 * Kill → the token that ends the longest stall among the first kStallWindow tokens after the
 * kill (counting the wait from the last token before it), and that stall; -1 when no token came
 * after the kill. Tokens already in flight arrive within milliseconds and are skipped that way.
 */
std::pair<double, double> stall_after(const stream_result &s, double kill_at) {
    const double kill_rel = kill_at - s.sent_at;
    double prev = -1, stall = -1, loss = -1;
    int after = 0;
    for (double t : s.token_times) {
        if (t <= kill_rel) {
            prev = t;
            continue;
        }
        if (++after > kStallWindow) break;
        const double from = prev < 0 ? kill_rel : prev;
        if (t - from > stall) stall = t - from, loss = t - kill_rel;
        prev = t;
    }
    return {loss, stall};
}

/** Each stream against the journal's replay of its session, and the moved streams' stalls. */
json node_loss_figures(const scenario_context &ctx, const std::string &base,
                       const std::vector<loss_stream> &streams, const kill_record &k,
                       scenario_result &r) {
    int completed = 0, moved = 0, missing = 0, duplicated = 0, equal_journal = 0;
    std::vector<double> gaps, losses, before;
    std::vector<int> moved_ones;  // per stream: 1 when its session moved
    for (const auto &s : streams) {
        std::string body;
        http_get(base, "/v1/sessions/" + s.r.session, 10, &body);
        const json info      = json::parse(body, nullptr, false);
        const bool was_moved = info.is_object() && info.contains("placements") &&
                               info["placements"].is_array() && info["placements"].size() > 1;
        // The journal's replay: the ids and text a reader of the whole answer gets.
        std::vector<long> journal;
        const stream_result replay = get_stream(
            base, "/v1/sessions/" + s.r.session + "/events?include_usage=true", req_opts(ctx),
            [&journal](stream_result &x) { return std::make_unique<id_feeder>(x, journal); });
        const std::set<long> live(s.ids.begin(), s.ids.end());
        for (long id : journal) missing += live.count(id) == 0;
        for (size_t i = 1; i < s.ids.size(); ++i) duplicated += s.ids[i] <= s.ids[i - 1];
        std::string replay_text;
        for (const auto &p : replay.pieces) replay_text += p;
        equal_journal += replay.ok && replay_text == s.text();
        completed += s.r.ok && s.r.tokens() == ctx.opts.stream_tokens && !s.ids.empty() &&
                     s.ids.back() == ctx.opts.stream_tokens;
        before.push_back(double(std::count_if(s.r.token_times.begin(), s.r.token_times.end(),
                                              [&](double t) { return t <= k.at - s.r.sent_at; })));
        moved_ones.push_back(was_moved ? 1 : 0);
        if (!was_moved || k.at <= 0) continue;
        ++moved;
        const auto [loss, gap] = stall_after(s.r, k.at);
        if (loss >= 0) losses.push_back(loss), gaps.push_back(gap);
    }
    r.samples["moved"]                = moved_ones;
    r.samples["gap_s"]                = gaps;
    r.samples["loss_to_next_token_s"] = losses;
    auto most                         = [](const std::vector<double> &v) {
        return v.empty() ? json(nullptr) : num(*std::max_element(v.begin(), v.end()));
    };
    return {{"streams", streams.size()},
            {"streams_completed", completed},
            {"streams_moved", moved},
            {"sessions_on_killed_node", k.sessions},
            {"tokens_before_kill", k.at > 0 ? num(median(before)) : json(nullptr)},
            {"gap_s", num(median(gaps))},
            {"gap_max_s", most(gaps)},
            {"loss_to_next_token_s", num(median(losses))},
            {"loss_to_next_token_max_s", most(losses)},
            {"ids_missing", missing},
            {"ids_duplicated", duplicated},
            {"streams_equal_journal", equal_journal}};
}

/**
 * The node-loss streams on two guests: once every stream has --kill-after token events, the
 * busiest guest's process group is SIGKILLed. Returns the texts received.
 */
std::vector<std::string> node_loss(scenario_context &ctx, loopback_cluster &cl,
                                   scenario_result &r) {
    const auto &o = ctx.opts;
    std::vector<std::atomic<int>> counts(static_cast<size_t>(std::max(1, o.cluster_streams)));
    std::atomic<bool> finished{false};
    kill_record k;
    std::thread monitor([&] {
        while (!finished) {
            const bool ready = std::all_of(counts.begin(), counts.end(),
                                           [&](const auto &c) { return c >= o.kill_after_tokens; });
            if (ready) {
                std::tie(k.node, k.sessions) = busiest_node(cl.base_url());
                if (!k.node.empty()) k.at = cl.kill_guest(k.node);
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    });
    ctx.prog.say("cluster: " + std::to_string(counts.size()) + " streams, kill after " +
                 std::to_string(o.kill_after_tokens) + " tokens each");
    const std::vector<loss_stream> streams =
        run_loss_streams(ctx, cl.base_url(), [&](int i) { ++counts[static_cast<size_t>(i)]; });
    finished = true;
    monitor.join();
    if (k.at <= 0)
        r.notes.push_back(
            "node loss: no guest was killed (the streams ended before every one "
            "had --kill-after tokens, or /api/ps named no node)");
    r.samples["killed_node"] = k.node;
    r.figures["node_loss"]   = node_loss_figures(ctx, cl.base_url(), streams, k, r);
    std::vector<std::string> texts;
    for (const auto &s : streams) texts.push_back(s.text());
    return texts;
}

/** Bytes on the link per generated token, and the idle link's bytes per second. */
json wire_figures(const wire_delta &idle, double idle_s, const wire_delta &run, long tokens) {
    const double t = tokens > 0 ? double(tokens) : NAN;
    return {{"bytes_per_token", num(double(run.from_guest + run.to_guest) / t)},
            {"bytes_from_guest_per_token", num(double(run.from_guest) / t)},
            {"bytes_to_guest_per_token", num(double(run.to_guest) / t)},
            {"idle_bytes_per_s", num(double(idle.from_guest + idle.to_guest) / idle_s)},
            {"tokens", tokens}};
}

/** The logs of run N go to OUT/logs/runN-cluster-*.log. */
std::string logs_prefix(const scenario_context &ctx) {
    const std::string out = ctx.opts.out.empty() ? "bench-out/" + ctx.opts.scenario : ctx.opts.out;
    return out + "/logs/run" + std::to_string(ctx.run + 1) + "-cluster";
}

/** The local side: its levels, then the node-loss streams uninterrupted (the reference). */
std::vector<std::string> local_phase(scenario_context &ctx, scenario_result &r) {
    const std::string base = ctx.server.base_url();
    long tokens            = 0;
    warm(ctx, base, "local");
    r.figures["local"] = measure_levels(ctx, base, "local", tokens);
    r.completion_tokens += tokens;
    ctx.prog.say("local: the node-loss streams, uninterrupted (reference)");
    std::vector<std::string> ref;
    for (const auto &s : run_loss_streams(ctx, base)) ref.push_back(s.r.ok ? s.text() : "");
    return ref;
}

/**
 * The guest side: head + guest-a, the levels through it with the link's bytes counted, then
 * guest-a leaves, guest-b and guest-c join and the node loss runs. Returns its texts.
 */
std::vector<std::string> guest_phase(scenario_context &ctx, scenario_result &r) {
    loopback_cluster cl(ctx.opts,
                        fs::path(ctx.server.log_path()).parent_path().string() + "/cluster",
                        logs_prefix(ctx));
    std::string err;
    ctx.prog.say("cluster: head and guest-a");
    const std::string token = cl.start_head(err);
    if (token.empty()) throw std::runtime_error(err);
    cl.add_guest("guest-a", token, ctx.opts.threads);
    if (!cl.wait_active(300, err)) throw std::runtime_error(err);
    warm(ctx, cl.base_url(), "guest");
    std::map<std::string, socket_bytes> w0, w1, w2;
    const double idle_s = 2.0;
    bool counted        = wire_snapshot(cl.worker_port(), w0);
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
    counted            = wire_snapshot(cl.worker_port(), w1) && counted;
    long tokens        = 0;
    r.figures["guest"] = measure_levels(ctx, cl.base_url(), "guest", tokens);
    r.completion_tokens += tokens;
    counted              = wire_snapshot(cl.worker_port(), w2) && counted && !w1.empty();
    const wire_delta run = wire_diff(w1, w2);
    r.figures["wire"]    = counted ? wire_figures(wire_diff(w0, w1), idle_s, run, tokens)
                                   : json{{"bytes_per_token", nullptr}};
    if (!counted) r.notes.push_back("wire: `ss -tin` gave no socket of the guest's worker port");
    if (run.closed) r.notes.push_back("wire: a link socket closed during the levels (bytes lost)");
    // Two guests at once on this machine: each gets its share of the cores, as on machines of
    // their own (two engines each spinning on every core slow each other down many times over).
    ctx.prog.say("cluster: guest-a leaves, guest-b and guest-c join");
    cl.stop_guest("guest-a");
    const std::string two_uses = cl.create_token(2);
    const int threads          = ctx.opts.cluster_guest_threads;
    cl.add_guest("guest-b", two_uses, threads);
    cl.add_guest("guest-c", two_uses, threads);
    if (!cl.wait_active(300, err)) throw std::runtime_error(err);
    std::vector<std::string> texts = node_loss(ctx, cl, r);
    cl.stop();
    r.figures["cluster_peak_rss_mib"] = cl.peak_rss();
    return texts;
}

}  // namespace

scenario_result run_cluster(scenario_context &ctx) {
    scenario_result r;
    if (!ctx.server.controlled()) {
        r.notes.push_back("cluster needs the bench to own the processes (--model, not --url)");
        for (const char *k : {"local", "guest", "guest_over_local", "wire", "node_loss"})
            r.figures[k] = nullptr;
        return r;
    }
    // Runs alternate which side goes first (the machine's speed drifts within minutes).
    std::vector<std::string> ref, got;
    if (ctx.run % 2 == 0) {
        ref = local_phase(ctx, r);
        ctx.server.stop();  // never two engines at once
        got = guest_phase(ctx, r);
    } else {
        ctx.server.stop();
        got = guest_phase(ctx, r);
        std::string err;
        if (!ctx.server.start(err)) throw std::runtime_error(err);
        ref = local_phase(ctx, r);
    }
    r.figures["guest_over_local"] = link_ratios(r.figures["local"], r.figures["guest"], ctx.opts);
    std::vector<int> equal;  // per stream: 1 when it equals the local reference
    for (size_t i = 0; i < got.size() && i < ref.size(); ++i)
        equal.push_back(!ref[i].empty() && got[i] == ref[i] ? 1 : 0);
    r.samples["equal_reference"]                      = equal;
    r.figures["node_loss"]["streams_equal_reference"] = std::count(equal.begin(), equal.end(), 1);
    r.notes.push_back(
        "wire: TCP payload bytes (TLS records included) of the head's sockets to guest-a's "
        "worker port, from the kernel: `ss -tin` bytes_received (from the guest) and bytes_acked "
        "(to it), the difference over the measured levels");
    return r;
}

}  // namespace sf::bench
