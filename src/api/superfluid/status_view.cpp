#include "api/superfluid/status_view.h"

#include <openssl/sha.h>

#include "api/common/json_fields.h"

namespace sf {

using json = nlohmann::json;

namespace {

// {"interactive": n, "normal": n, "batch": n} from counts indexed by class.
json by_class(const int32_t (&counts)[k_classes]) {
    json out = json::object();
    for (int c = 0; c < k_classes; ++c) out[k_class_names[c]] = counts[c];
    return out;
}

}  // namespace

std::string session_ref(const std::string &id) {
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char *>(id.data()), id.size(), d);
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 8; ++i) {
        out += digits[d[i] >> 4];
        out += digits[d[i] & 15];
    }
    return out;
}

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

std::string health_body(const worker_health &h) {
    const bool ready = h.reachable && h.status.ready;
    return fields::dump_json({{"status", ready ? "ok" : h.reachable ? "loading" : "unavailable"}});
}

std::string nodes_body(const std::vector<node_report> &nodes) {
    json out = json::array();
    for (const auto &n : nodes)
        out.push_back({{"name", n.name},
                       {"address", n.address},
                       {"state", n.state},
                       {"message", n.message},
                       {"model_fingerprint", n.model_fingerprint},
                       {"tokenizer_fingerprint", n.tokenizer_fingerprint},
                       {"slots", n.slots},
                       {"running", n.running},
                       {"placed_total", n.placed_total},
                       {"certificate_serial", n.certificate_serial},
                       {"last_seen_s", n.last_seen_s},
                       {"engine", n.engine},
                       {"model", n.model_name},
                       {"running_by_class", by_class(n.running_by_class)},
                       {"kv_cells", n.kv_cells},
                       {"kv_bytes_per_token", n.kv_bytes_per_token},
                       {"cache_hit_rate", n.cache_hit_rate},
                       {"cached_tokens", n.cached_tokens}});
    return fields::dump_json({{"nodes", out}});
}

std::string metric_number(double v) {
    return json(v).dump();
}

double prefix_cache_hit_rate(const cache_report &c) {
    return c.prompt_tokens > 0 ? double(c.cached_tokens) / double(c.prompt_tokens) : 0.0;
}

double kv_cache_usage(const worker_status &r) {
    return r.kv_total_cells > 0 ? double(r.kv_used_cells) / double(r.kv_total_cells) : 0.0;
}

}  // namespace sf
