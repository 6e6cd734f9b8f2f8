// What the /ui page shows, as one JSON snapshot: running sessions, queues per class, tick
// counters, batch composition, prefix cache, worker. Built from the same figures as /api/ps
// and /metrics (api/superfluid/status_view.h). JSON stays in api/: http/ui_routes serves it.
// Threads: any HTTP handler thread may call ui_snapshot_source::get concurrently; one snapshot
// is built at a time (under the source's mutex) and shared by every viewer for up to
// `max_age`, so N open pages cost one worker Health call per second, not N.
// Rates (tokens/s, ticks/s, sequences per tick, each session's tokens/s) are computed here
// between consecutive builds, so a page shows them from its first snapshot: the first build
// after an idle spell (no build for 5 s) samples twice, 200 ms apart.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "session/session_manager.h"

namespace sf {

/**
 * Builds a snapshot now (one worker Health call, deadline ~0.5 s). `show_pid`: the worker's
 * process id is included (only when --api-key is in use: every viewer holds a key).
 */
nlohmann::json build_ui_snapshot(session_manager &sessions, const std::string &model_id,
                                 bool show_pid = false);

class ui_snapshot_source {
  public:
    /** `sessions` must outlive the source; `show_pid` as build_ui_snapshot's. */
    ui_snapshot_source(session_manager &sessions, std::string model_id, bool show_pid = false,
                       std::chrono::milliseconds max_age = std::chrono::milliseconds(900))
        : sessions_(sessions),
          model_id_(std::move(model_id)),
          show_pid_(show_pid),
          max_age_(max_age) {}

    /**
     * The latest snapshot (rebuilt when older than `max_age`) as compact JSON text for one
     * viewer: a session row keeps its id only where `show_id(who made it)` is true
     * (session_access::may_list).
     */
    std::string get(const std::function<bool(const std::string &)> &show_id);

  private:
    // The counters rates are computed from, as of one build.
    struct sample {
        std::chrono::steady_clock::time_point at;
        int64_t generated = 0, ticks = 0, batches = 0, events = 0;
        bool up = false;  // the worker answered health: the counters are its own, not zeros
        std::map<std::string, int64_t> session_tokens;  // id -> generated tokens
    };
    static sample sample_of(const nlohmann::json &snap, std::chrono::steady_clock::time_point at);
    // Adds "rates" and each session's "tokens_per_s" to `snap`, from `before` to `now`.
    static void add_rates(nlohmann::json &snap, const sample &before, const sample &now);

    session_manager &sessions_;
    const std::string model_id_;
    const bool show_pid_;
    const std::chrono::milliseconds max_age_;
    std::mutex mu_;  // guards the three fields below
    std::chrono::steady_clock::time_point built_{};
    nlohmann::json snap_;  // with every session's id and owner, and the rates
    std::optional<sample> last_;
};

}  // namespace sf
