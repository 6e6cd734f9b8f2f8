// Status figures shared by the endpoints that report them (/api/ps, /metrics, /ui/events), so
// each is computed in one place. Stateless functions of what the session manager reports.
#pragma once

#include <nlohmann/json.hpp>

#include "api/priority.h"
#include "core/worker_report.h"
#include "session/session_manager.h"

namespace sf {

/** "prefill" before a session's first token, "generating" after (as /api/ps says). */
const char *session_state_name(const session_manager::session_info &s);

/**
 * One running session as JSON: id, priority, api, client (User-Agent), state, prompt/generated
 * tokens, age_s, ttft_s (null before the first token).
 */
nlohmann::json session_json(const session_manager::session_info &s);

/** Every running session of `sessions` (session_manager::running_sessions) as a JSON array. */
nlohmann::json running_sessions_json(session_manager &sessions);

/** Cached prompt tokens / prompt tokens since the worker started; 0 before any prompt. */
double prefix_cache_hit_rate(const cache_report &c);

/** Share of KV cells held by running sequences; 0 when the worker reports no cells. */
double kv_cache_usage(const worker_status &r);

}  // namespace sf
