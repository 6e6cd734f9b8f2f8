#include "api/common/priority.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace sf {

std::string api_key(const priority_headers &h) {
    const std::string bearer = "Bearer ";
    if (h.authorization.rfind(bearer, 0) == 0) return h.authorization.substr(bearer.size());
    if (!h.x_api_key.empty()) return h.x_api_key;
    return h.authorization;
}

static std::optional<priority_class> class_from_key(const std::string &key) {
    if (auto c = parse_class_name(key)) return c;
    for (const char *name : k_class_names) {
        if (key.rfind(std::string("sk-") + name + "-", 0) == 0) return parse_class_name(name);
    }
    return std::nullopt;
}

bool resolve_priority(const std::optional<priority_class> &from_body, const priority_headers &h,
                      const priority_config &cfg, priority_class &out, api_error &err) {
    if (from_body) {
        out = *from_body;
        return true;
    }
    if (!h.x_priority.empty()) {
        auto c = parse_class_name(h.x_priority);
        if (!c) {
            err = bad_request("X-Superfluid-Priority must be interactive, normal or batch",
                              "X-Superfluid-Priority", "invalid_value");
            return false;
        }
        out = *c;
        return true;
    }
    const std::string key = api_key(h);
    if (auto c = class_from_key(key)) {
        out = *c;
        return true;
    }
    for (const auto &r : cfg.rules) {
        bool key_ok = r.key_contains.empty() || key.find(r.key_contains) != std::string::npos;
        bool ua_ok  = r.user_agent_contains.empty() ||
                     h.user_agent.find(r.user_agent_contains) != std::string::npos;
        if (key_ok && ua_ok && (!r.key_contains.empty() || !r.user_agent_contains.empty())) {
            out = r.cls;
            return true;
        }
    }
    out = cfg.default_class;
    return true;
}

std::string load_priority_config(const std::string &path, priority_config &cfg) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return "cannot read the config file " + path;
    std::ostringstream text;
    text << f.rdbuf();
    return parse_priority_config(text.str(), path, cfg);
}

std::string parse_priority_config(const std::string &text, const std::string &name,
                                  priority_config &cfg) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return name + " is not a JSON object";
    if (j.contains("default_priority")) {
        auto c = j["default_priority"].is_string()
                     ? parse_class_name(j["default_priority"].get<std::string>())
                     : std::nullopt;
        if (!c) return name + ": default_priority must be interactive, normal or batch";
        cfg.default_class = *c;
    }
    if (j.contains("priority_rules")) {
        if (!j["priority_rules"].is_array()) return name + ": priority_rules must be an array";
        for (const auto &r : j["priority_rules"]) {
            priority_rule rule;
            auto c = r.is_object() && r.contains("class") && r["class"].is_string()
                         ? parse_class_name(r["class"].get<std::string>())
                         : std::nullopt;
            if (!c)
                return name + ": each priority rule needs a class (interactive, normal or batch)";
            rule.cls = *c;
            // (json::value() throws on a present key of another type: checked first.)
            for (const char *k : {"key", "user_agent"}) {
                if (r.contains(k) && !r[k].is_string())
                    return name + ": a priority rule's " + k + " must be a string";
            }
            rule.key_contains        = r.value("key", "");
            rule.user_agent_contains = r.value("user_agent", "");
            if (rule.key_contains.empty() && rule.user_agent_contains.empty()) {
                return name + ": each priority rule needs a key or a user_agent to match";
            }
            cfg.rules.push_back(std::move(rule));
        }
    }
    return "";
}

}  // namespace sf
