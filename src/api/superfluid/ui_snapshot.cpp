#include "api/superfluid/ui_snapshot.h"

#include <algorithm>
#include <thread>

#include "api/superfluid/status_view.h"

namespace sf {

using json = nlohmann::json;

json build_ui_snapshot(session_manager &sessions, const std::string &model_id, bool show_pid) {
    const auto h  = sessions.health();
    const auto w  = sessions.worker_stats();
    const auto &r = h.status;
    const auto &c = r.cache;
    json classes  = json::array();
    for (const auto &k : r.classes) {
        classes.push_back({{"name", k.name},
                           {"running", k.running},
                           {"waiting", k.waiting},
                           {"preemptions", k.preemptions}});
    }
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    json snap      = {
             {"time_ms", std::chrono::duration_cast<std::chrono::milliseconds>(now).count()},
             {"model", model_id},
             {"worker",
              {{"up", h.reachable && r.ready},
               {"starts", w.starts},
               {"restarts", w.starts > 0 ? w.starts - 1 : 0},
               {"parallel", r.n_parallel},
               {"n_ctx", r.n_ctx}}},
             // Every id and its owner: ui_snapshot_source::get keeps what each viewer may see.
             {"sessions", running_sessions_json(
                              sessions, [](const std::string &) { return true; }, true)},
             {"running", r.active_sequences},
             {"waiting", r.waiting_sessions},
             {"classes", classes},
             {"ticks",
              {{"total", r.ticks},
               {"batched", r.batched_ticks},
               {"last_sequences", r.last_sequences_per_tick},
               {"max_sequences", r.max_sequences_per_tick}}},
             {"events", {{"batches", w.batches}, {"events", w.events}}},
             {"tokens",
              {{"prompt_total", r.prompt_tokens_total}, {"generated_total", r.generated_tokens_total}}},
             {"preemptions", r.preemptions},
             {"journal_bytes", sessions.journal_bytes()},
             {"kv_cache_usage", kv_cache_usage(r)},
             {"parked_bytes", r.parked_bytes},
             {"prefix_cache",
              {{"hit_rate", prefix_cache_hit_rate(c)},
               {"lookups", c.lookups},
               {"hits", c.hits},
               {"prompt_tokens", c.prompt_tokens},
               {"cached_tokens", c.cached_tokens},
               {"ram_bytes", c.ram_bytes},
               {"entries", c.entries},
               {"disk_bytes", c.disk_bytes}}},
    };
    if (show_pid) snap["worker"]["pid"] = w.pid;
    return snap;
}

ui_snapshot_source::sample ui_snapshot_source::sample_of(const json &snap,
                                                         std::chrono::steady_clock::time_point at) {
    sample x;
    x.at        = at;
    x.up        = snap["worker"].value("up", false);
    x.generated = snap["tokens"].value("generated_total", int64_t{0});
    x.ticks     = snap["ticks"].value("total", int64_t{0});
    x.batches   = snap["events"].value("batches", int64_t{0});
    x.events    = snap["events"].value("events", int64_t{0});
    for (const auto &s : snap["sessions"])
        x.session_tokens[s.value("id", "")] = s.value("generated_tokens", int64_t{0});
    return x;
}

void ui_snapshot_source::add_rates(json &snap, const sample &before, const sample &now) {
    const double dt = std::chrono::duration<double>(now.at - before.at).count();
    // A sample from a worker that did not answer health (busy past its deadline, restarting)
    // holds zeros, not counters: no rate from it rather than a false 0 or a jump.
    if (dt <= 0 || !before.up || !now.up) return;
    // Counters restart from 0 with the worker: a negative step counts as none.
    auto per_s = [dt](int64_t a, int64_t b) { return double(std::max<int64_t>(0, a - b)) / dt; };
    const int64_t batches = now.batches - before.batches;
    snap["rates"]         = {
                {"interval_s", dt},
                {"tokens_per_s", per_s(now.generated, before.generated)},
                {"ticks_per_s", per_s(now.ticks, before.ticks)},
                // Sequences per tick: Events-stream events per message (one message per tick).
                {"sequences_per_tick",
         batches > 0 ? json(double(now.events - before.events) / double(batches)) : json()}};
    for (auto &s : snap["sessions"]) {
        auto it = before.session_tokens.find(s.value("id", ""));
        s["tokens_per_s"] =
            per_s(s.value("generated_tokens", int64_t{0}),
                  it == before.session_tokens.end() ? 0 : it->second);  // new: all its tokens
    }
}

std::string ui_snapshot_source::get(const std::function<bool(const std::string &)> &show_id) {
    using namespace std::chrono_literals;
    json snap;
    {
        std::lock_guard lk(mu_);
        auto now = std::chrono::steady_clock::now();
        if (snap_.is_null() || now - built_ >= max_age_) {
            json fresh = build_ui_snapshot(sessions_, model_id_, show_pid_);
            built_     = now;  // the snapshot's age counts from its first sample
            if (!last_ || now - last_->at > 5s) {
                // No recent build to measure from: measure over a short interval now, so the
                // first snapshot a page gets has rates too.
                auto measure = [&] {
                    last_ = sample_of(fresh, now);
                    std::this_thread::sleep_for(200ms);
                    fresh = build_ui_snapshot(sessions_, model_id_, show_pid_);
                    now   = std::chrono::steady_clock::now();
                };
                measure();
                if (!last_->up) measure();  // the first sample missed the worker: again from here
            }
            sample cur = sample_of(fresh, now);
            add_rates(fresh, *last_, cur);  // per session by id, before ids are filtered
            last_ = std::move(cur);
            snap_ = std::move(fresh);
        }
        snap = snap_;
    }
    // This viewer's copy: ids only of the sessions it may list, and no owner at all.
    for (auto &row : snap["sessions"]) {
        if (!show_id(row.value("owner", std::string()))) row.erase("id");
        row.erase("owner");
    }
    return snap.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace sf
