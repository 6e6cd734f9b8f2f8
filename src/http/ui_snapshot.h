// What the /ui page shows, as one JSON snapshot: running sessions, queues per class, tick
// counters, batch composition, prefix cache, worker. Built from the same figures as /api/ps
// and /metrics (http/status_view.h).
// Threads: any HTTP handler thread may call ui_snapshot_source::get concurrently; one snapshot
// is built at a time (under the source's mutex) and shared by every viewer for up to
// `max_age`, so N open pages cost one worker Health call per second, not N.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "session/session_manager.h"

namespace sf {

/** Builds a snapshot now (one worker Health call, deadline ~0.5 s). */
nlohmann::json build_ui_snapshot(session_manager &sessions, const std::string &model_id);

class ui_snapshot_source {
  public:
    /** `sessions` must outlive the source. */
    ui_snapshot_source(session_manager &sessions, std::string model_id,
                       std::chrono::milliseconds max_age = std::chrono::milliseconds(900))
        : sessions_(sessions), model_id_(std::move(model_id)), max_age_(max_age) {}

    /** The latest snapshot as compact JSON text; rebuilt when older than `max_age`. */
    std::string get();

  private:
    session_manager &sessions_;
    const std::string model_id_;
    const std::chrono::milliseconds max_age_;
    std::mutex mu_;  // guards the two fields below
    std::chrono::steady_clock::time_point built_{};
    std::string text_;
};

}  // namespace sf
