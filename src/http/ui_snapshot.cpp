#include "http/ui_snapshot.h"

#include "http/status_view.h"

namespace sf {

using json = nlohmann::json;

json build_ui_snapshot(session_manager &sessions, const std::string &model_id) {
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
    return {
        {"time_ms", std::chrono::duration_cast<std::chrono::milliseconds>(now).count()},
        {"model", model_id},
        {"worker",
         {{"up", h.reachable && r.ready},
          {"pid", w.pid},
          {"starts", w.starts},
          {"restarts", w.starts > 0 ? w.starts - 1 : 0},
          {"parallel", r.n_parallel},
          {"n_ctx", r.n_ctx}}},
        {"sessions", running_sessions_json(sessions)},
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
}

std::string ui_snapshot_source::get() {
    std::lock_guard lk(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (text_.empty() || now - built_ >= max_age_) {
        text_ = build_ui_snapshot(sessions_, model_id_)
                    .dump(-1, ' ', false, json::error_handler_t::replace);
        built_ = now;
    }
    return text_;
}

}  // namespace sf
