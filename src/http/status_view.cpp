#include "http/status_view.h"

#include "http/session_access.h"

namespace sf {

using json = nlohmann::json;

const char *session_state_name(const session_manager::session_info &s) {
    return s.generated > 0 ? "generating" : "prefill";
}

json session_json(const session_manager::session_info &s) {
    return {{"ref", session_ref(s.id)},
            {"priority", class_name(s.cls)},
            {"api", s.api},
            {"client", s.user_agent},
            {"state", session_state_name(s)},
            {"prompt_tokens", s.prompt_tokens},
            {"generated_tokens", s.generated},
            {"age_s", s.age_s},
            {"ttft_s", s.ttft_s >= 0 ? json(s.ttft_s) : json(nullptr)}};
}

json running_sessions_json(session_manager &sessions,
                           const std::function<bool(const std::string &)> &show_id,
                           bool with_owner) {
    json out = json::array();
    for (const auto &s : sessions.running_sessions()) {
        json j = session_json(s);
        if (show_id(s.client)) j["id"] = s.id;
        if (with_owner) j["owner"] = s.client;
        const std::string where = sessions.session_node(s.id);
        if (!where.empty()) j["node"] = where;  // cluster mode: the node it runs on
        out.push_back(std::move(j));
    }
    return out;
}

double prefix_cache_hit_rate(const cache_report &c) {
    return c.prompt_tokens > 0 ? double(c.cached_tokens) / double(c.prompt_tokens) : 0.0;
}

double kv_cache_usage(const worker_status &r) {
    return r.kv_total_cells > 0 ? double(r.kv_used_cells) / double(r.kv_total_cells) : 0.0;
}

}  // namespace sf
