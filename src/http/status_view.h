// Status figures shared by the endpoints that report them (/api/ps, /metrics, /ui/events), so
// each is computed in one place. Stateless functions of what the session manager reports.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

#include "api/common/priority.h"
#include "core/worker_report.h"
#include "session/session_manager.h"

namespace sf {

/** "prefill" before a session's first token, "generating" after (as /api/ps says). */
const char *session_state_name(const session_manager::session_info &s);

/**
 * One running session as JSON: ref (http/session_access.h: a handle that grants nothing; not
 * the id), priority, api, client (User-Agent), state, prompt/generated tokens, age_s, ttft_s
 * (null before the first token).
 */
nlohmann::json session_json(const session_manager::session_info &s);

/**
 * Every running session of `sessions` (session_manager::running_sessions) as a JSON array; a
 * row has its "id" only where `show_id(who made it)` is true (session_access::may_list), and
 * with `with_owner` that client id as "owner" (for a caller that filters rows itself; never sent).
 */
nlohmann::json running_sessions_json(session_manager &sessions,
                                     const std::function<bool(const std::string &)> &show_id,
                                     bool with_owner = false);

/** Cached prompt tokens / prompt tokens since the worker started; 0 before any prompt. */
double prefix_cache_hit_rate(const cache_report &c);

/** Share of KV cells held by running sequences; 0 when the worker reports no cells. */
double kv_cache_usage(const worker_status &r);

}  // namespace sf
