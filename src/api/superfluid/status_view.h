// Superfluid's own status bodies: /health, /api/nodes, the "sessions" rows of /api/ps and
// /ui/events, and the figures /metrics shares with them, each computed in one place. Stateless
// functions of what the session manager reports; JSON stays in api/ (the HTTP edge only
// routes). Any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "api/common/priority.h"
#include "core/worker_report.h"
#include "session/session_manager.h"

namespace sf {

/**
 * A session's public handle: the first 8 bytes of SHA-256(id) as 16 hex digits. It grants
 * nothing (listings show it to everyone); whoever holds the id can compute it to find its own row.
 */
std::string session_ref(const std::string &id);

/** "prefill" before a session's first token, "generating" after (as /api/ps says). */
const char *session_state_name(const session_manager::session_info &s);

/**
 * One running session as JSON: ref (session_ref; not the id), priority, api, client
 * (User-Agent), state, prompt/generated tokens, age_s, ttft_s (null before the first token).
 */
nlohmann::json session_json(const session_manager::session_info &s);

/**
 * Every running session of `sessions` (session_manager::running_sessions) as a JSON array; a
 * row has its "id" only where `show_id(who made it)` is true (http/session_access's may_list),
 * and with `with_owner` that client id as "owner" (for a caller that filters rows itself; never
 * sent).
 */
nlohmann::json running_sessions_json(session_manager &sessions,
                                     const std::function<bool(const std::string &)> &show_id,
                                     bool with_owner = false);

/**
 * GET /health's body: {"status": "ok"} when the worker is reachable and ready, "loading" when
 * reachable but not ready, "unavailable" otherwise (the route answers 200 or 503).
 */
std::string health_body(const worker_health &h);

/** GET /api/nodes' body: {"nodes": [...]}, one object per node_report (`superfluid nodes`). */
std::string nodes_body(const std::vector<node_report> &nodes);

/** A number as /metrics writes it (JSON's shortest round-trip form: 3.0, 0.25, 1e+20). */
std::string metric_number(double v);

/** Cached prompt tokens / prompt tokens since the worker started; 0 before any prompt. */
double prefix_cache_hit_rate(const cache_report &c);

/** Share of KV cells held by running sequences; 0 when the worker reports no cells. */
double kv_cache_usage(const worker_status &r);

}  // namespace sf
