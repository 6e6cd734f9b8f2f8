// Scenario `recovery`: SIGKILL the inference process mid-stream (or, with
// --recovery-through-guest, the cluster guest running the stream); time to the next token and
// the stream's integrity against an uninterrupted reference run.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <thread>

#include "bench/loopback_cluster.h"
#include "bench/scenario.h"
#include "bench/stats.h"

namespace sf::bench {

namespace {

namespace fs = std::filesystem;

// Tokens after the kill searched for the recovery stall.
constexpr int kRecoveryWindow = 64;

/** How a received piece sequence lines up with the reference. */
struct integrity {
    int matched = 0, duplicated = 0, mismatched = 0;
};

// Consecutive equal tokens that count as the stream picking the reference up again (random
// text matches a run this long by chance essentially never).
constexpr size_t kMinRun = 8;

/**
 * Aligns the received tokens with the reference: in order they match; where they stop
 * matching, a run of >= kMinRun tokens found earlier in the reference is a replay (duplicated),
 * found later a skip (the tokens between are missing); anything else is mismatched (a stream
 * that diverged). received = matched + duplicated + mismatched; missing = reference - matched.
 */
integrity align(const std::vector<std::string> &ref, const std::vector<std::string> &got) {
    integrity a;
    size_t i = 0, j = 0;
    auto run = [&](size_t gi, size_t rq) {
        size_t n = 0;
        while (gi + n < got.size() && rq + n < ref.size() && got[gi + n] == ref[rq + n]) ++n;
        return n;
    };
    while (i < got.size()) {
        if (j < ref.size() && got[i] == ref[j]) {
            ++a.matched, ++i, ++j;
            continue;
        }
        size_t best_q = 0, best_n = 0;
        for (size_t q = 0; q < ref.size(); ++q) {
            size_t n = q == j ? 0 : run(i, q);
            if (n > best_n) best_n = n, best_q = q;
        }
        size_t need = std::min(kMinRun, got.size() - i);
        if (need >= 2 && best_n >= need) {
            if (best_q < j) {
                size_t d = std::min(j - best_q, best_n);
                a.duplicated += static_cast<int>(d);
                i += d;
            } else {
                j = best_q;
            }
            continue;
        }
        ++a.mismatched, ++i;
    }
    return a;
}

/**
 * What the client lost or got twice, judged without the reference text (issue #37: a
 * continuation may differ from an uninterrupted run where two candidates nearly tie, which
 * the text alignment cannot tell from a loss). For a stream whose frames carry token indices
 * (Superfluid's SSE ids) and whose session the server journals: duplicated = frames whose index
 * is not above every index before it; missing = 0 when the received text equals the session's
 * journaled text, else the journaled tokens past the last index received. Without ids (a
 * server that cannot resume): missing = reference tokens never received, duplicated from the
 * text alignment.
 */
struct delivery {
    int missing = 0, duplicated = 0;
    int journal_equal = -1;  // 1/0: the received text equals the session's text; -1: no journal
};

delivery judge_delivery(const std::string &base, const stream_result &ref, const stream_result &got,
                        const integrity &a) {
    delivery d;
    if (got.event_ids.empty() || got.session.empty()) {
        d.missing    = std::max(0, static_cast<int>(ref.pieces.size()) - a.matched - a.mismatched);
        d.duplicated = a.duplicated;
        return d;
    }
    long long top = -1;
    for (long long id : got.event_ids) {
        if (id <= top) ++d.duplicated;
        top = std::max(top, id);
    }
    std::string body;
    if (http_get(base, "/v1/sessions/" + got.session, 30, &body) != 200) {
        d.missing = std::max(0, static_cast<int>(ref.pieces.size()) - static_cast<int>(top + 1));
        return d;
    }
    const auto j = nlohmann::json::parse(body, nullptr, false);
    std::string journaled, received;
    int generated = 0;
    if (j.is_object()) {
        for (const char *k : {"reasoning", "text"})
            if (j.contains(k) && j[k].is_string()) journaled += j[k].get<std::string>();
        if (j.contains("usage") && j["usage"].is_object())
            generated = j["usage"].value("completion_tokens", 0);
    }
    for (const auto &p : got.pieces) received += p;
    d.journal_equal = received == journaled ? 1 : 0;
    if (!d.journal_equal) d.missing = std::max(1, generated - static_cast<int>(top + 1));
    return d;
}

nlohmann::json story_messages() {
    return {{{"role", "user"},
             {"content", "Write a very long story about a lighthouse keeper. Do not stop."}}};
}

/**
 * Where the killed stream runs: the server the bench started (its inference process is killed),
 * or a loopback cluster (the guest running the stream is killed, join and worker).
 */
struct kill_target {
    std::string base;                         // the API, http://127.0.0.1:PORT
    std::function<void(std::string &)> kill;  // SIGKILL what serves the stream now
    std::function<void()> settle;             // before stopping: let a restart finish
    bool standby = false;                     // wait for superfluid's standby before the kill
};

/** The reference streams, the killed one and the figures (scenario_result::figures). */
void measure(scenario_context &ctx, const kill_target &t, scenario_result &r) {
    const auto &o = ctx.opts;
    // The reference: the same request twice, uninterrupted; the second is compared with the
    // interrupted run, which finds the server in the same state (e.g. its prompt cached, which
    // can change the numerics of a sampled stream). Whether the two agree is recorded.
    ctx.prog.say("reference streams");
    nlohmann::json body = chat_body(story_messages(), o.stream_tokens);
    stream_result ref0  = post_chat_stream(t.base, body, req_opts(ctx));
    stream_result ref   = post_chat_stream(t.base, body, req_opts(ctx));

    // Superfluid with a hot standby (serve --standby, on by default where memory allows): the
    // kill is measured once the standby has loaded, as a worker that has run for a while has.
    int standby_at_kill = -1;
    if (t.standby) {
        ctx.prog.say("waiting for the standby worker");
        standby_at_kill = 0;
        for (double until = now_s() + 60; now_s() < until;) {
            if (superfluid_metric(t.base, "worker_standby", 2.0) == 1) {
                standby_at_kill = 1;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    ctx.prog.say("stream, kill after " + std::to_string(o.kill_after_tokens) + " tokens");
    std::atomic<double> killed_at{0};
    std::string kill_error;
    request_options ro = req_opts(ctx);
    ro.on_token        = [&](int n, double) {
        if (n == o.kill_after_tokens && killed_at.load() == 0) {
            killed_at = now_s();
            t.kill(kill_error);
        }
    };
    stream_result got = post_chat_stream(t.base, body, ro);

    double recovery = -1;
    int before_kill = 0;
    if (killed_at.load() > 0) {
        double kill_rel = killed_at.load() - got.sent_at;
        // Tokens the killed process had already sent arrive within milliseconds of the kill;
        // the recovery is the longest stall among the next tokens: the time from the kill to
        // the token that ends it (a resumed stream), or, with no token after the kill, the
        // time until the service answers again (below).
        double prev = kill_rel, longest = -1;
        int after = 0;
        for (double t : got.token_times) {
            if (t <= kill_rel) {
                ++before_kill;
                continue;
            }
            if (++after > kRecoveryWindow) break;
            if (t - prev > longest) {
                longest  = t - prev;
                recovery = t - kill_rel;
            }
            prev = t;
        }
        if (recovery < 0) {
            // The stream was cut: time until the service delivers a token again.
            ctx.prog.say("stream cut; probing for service");
            nlohmann::json probe = chat_body({{{"role", "user"}, {"content", "Hi"}}}, 1);
            request_options po   = req_opts(ctx);
            po.timeout_s         = 60;
            while (now_s() - killed_at.load() < 300) {
                stream_result p = post_chat_stream(t.base, probe, po);
                if (p.ttft_s >= 0) {
                    recovery = p.sent_at + p.ttft_s - killed_at.load();
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        }
    } else {
        r.notes.push_back("the stream ended before the kill point");
    }
    if (!kill_error.empty()) r.notes.push_back("kill: " + kill_error);
    if (got.cut) r.notes.push_back("stream cut: " + (got.error.empty() ? "no [DONE]" : got.error));
    t.settle();

    integrity a              = align(ref.pieces, got.pieces);
    const delivery d         = judge_delivery(t.base, ref, got, a);
    auto &f                  = r.figures;
    f["recovery_s"]          = recovery >= 0 ? num(recovery) : nullptr;
    f["tokens_reference"]    = static_cast<int>(ref.pieces.size());
    f["tokens_received"]     = static_cast<int>(got.pieces.size());
    f["tokens_before_kill"]  = before_kill;
    f["tokens_missing"]      = d.missing;
    f["tokens_duplicated"]   = d.duplicated;
    f["text_equals_journal"] = d.journal_equal < 0 ? nlohmann::json() : num(d.journal_equal);
    f["tokens_mismatched"]   = a.mismatched;
    f["stream_cut"]          = got.cut ? 1 : 0;
    f["reference_stable"]    = ref0.pieces == ref.pieces ? 1 : 0;
    f["standby_at_kill"]     = standby_at_kill < 0 ? nlohmann::json() : num(standby_at_kill);
    // Where the received stream first leaves the reference, with the tokens around it.
    size_t common = 0;
    while (common < ref.pieces.size() && common < got.pieces.size() &&
           ref.pieces[common] == got.pieces[common])
        ++common;
    f["tokens_common_prefix"] = static_cast<int>(common);
    if (common < got.pieces.size()) {
        auto slice = [&](const std::vector<std::string> &v) {
            size_t from = common >= 3 ? common - 3 : 0;
            return std::vector<std::string>(
                v.begin() + static_cast<long>(from),
                v.begin() + static_cast<long>(std::min(v.size(), common + 5)));
        };
        r.samples["divergence"] = {
            {"index", common}, {"reference", slice(ref.pieces)}, {"received", slice(got.pieces)}};
    }
    r.completion_tokens = std::max(0, ref.tokens());
    if (ref0.pieces != ref.pieces)
        r.notes.push_back(
            "two uninterrupted runs of the same seeded request differed: the "
            "integrity counts include that nondeterminism");
}

/**
 * Superfluid through a guest (--recovery-through-guest, issue #37): a routing-only head and
 * two loopback guests; the guest running the stream is SIGKILLed (join and worker) and the
 * session moves to the other one. The bench's own server is stopped meanwhile (never two
 * engines at once) and started again after.
 */
void through_guest(scenario_context &ctx, scenario_result &r) {
    ctx.server.stop();
    {
        loopback_cluster cl(ctx.opts,
                            fs::path(ctx.server.log_path()).parent_path().string() + "/cluster",
                            (ctx.opts.out.empty() ? "bench-out/recovery" : ctx.opts.out) +
                                "/logs/run" + std::to_string(ctx.run + 1) + "-cluster");
        std::string err;
        ctx.prog.say("cluster: head, guest-a and guest-b");
        if (cl.start_head(err).empty()) throw std::runtime_error(err);
        const std::string two_uses = cl.create_token(2);
        cl.add_guest("guest-a", two_uses, ctx.opts.cluster_guest_threads);
        cl.add_guest("guest-b", two_uses, ctx.opts.cluster_guest_threads);
        if (!cl.wait_active(300, err)) throw std::runtime_error(err);
        std::string killed;
        kill_target t;
        t.base = cl.base_url();
        t.kill = [&](std::string &e) {
            killed = busiest_node(t.base).first;
            if (killed.empty() || cl.kill_guest(killed) <= 0) e = "no guest ran the stream";
        };
        t.settle = [] {};
        measure(ctx, t, r);
        r.samples["killed_node"]          = killed;
        r.figures["cluster_peak_rss_mib"] = cl.peak_rss();
        cl.stop();
    }
    r.notes.push_back(
        "through a guest: a routing-only head and two loopback guests; the guest running the "
        "stream was SIGKILLed (its join and worker), the session moved to the other");
    std::string err;
    if (!ctx.server.start(err)) throw std::runtime_error(err);
}

}  // namespace

scenario_result run_recovery(scenario_context &ctx) {
    const auto &o = ctx.opts;
    scenario_result r;
    if (!ctx.server.controlled()) {
        r.notes.push_back("recovery needs the bench to own the processes (--model, not --url)");
        for (const char *k : {"recovery_s", "tokens_missing", "tokens_duplicated", "stream_cut"})
            r.figures[k] = nullptr;
        return r;
    }
    warm_up(ctx);
    const bool superfluid = ctx.server.spec().kind == server_kind::superfluid;
    if (superfluid && o.recovery_through_guest) {
        through_guest(ctx, r);
        return r;
    }
    kill_target t;
    t.base    = ctx.server.base_url();
    t.kill    = [&](std::string &e) { ctx.server.kill_engine(e); };
    t.settle  = [&] { ctx.server.wait_healthy(120); };  // a restarted llama-server loads
    t.standby = superfluid && o.standby != "off";
    measure(ctx, t, r);
    return r;
}

}  // namespace sf::bench
