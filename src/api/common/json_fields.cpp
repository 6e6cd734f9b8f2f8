#include "api/common/json_fields.h"

#include "api/common/json_schema_check.h"

#include <algorithm>
#include <cmath>

namespace sf::fields {

std::string dump_json(const json &j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

api_error wrong(const std::string &path, const char *key, const std::string &what,
                const char *code) {
    const std::string name = path + key;
    return bad_request("'" + name + "' " + what, name, code);
}

}  // namespace

bool parse_object(const std::string &body, json &out, api_error &err) {
    // The parser itself is iterative; what recurses per level is ours (the request readers'
    // walks) and json's dump(). A container deeper than the cap is discarded as it starts, never
    // built, so nothing deep exists afterwards to walk, dump or destroy (issue #38: 100,000
    // levels in chat_template_kwargs overflowed the head's stack).
    bool too_deep                     = false;
    const json::parser_callback_t cap = [&too_deep](int depth, json::parse_event_t ev, json &) {
        if (ev != json::parse_event_t::object_start && ev != json::parse_event_t::array_start)
            return true;
        if (depth >= max_body_depth) too_deep = true;
        return depth < max_body_depth;
    };
    out = json::parse(body, cap, /*allow_exceptions=*/false);
    if (too_deep && !out.is_discarded()) {
        out = json();
        err = bad_request("the request body nests objects and arrays deeper than " +
                              std::to_string(max_body_depth) + " levels",
                          "", "invalid_json");
        return false;
    }
    if (out.is_discarded() || !out.is_object()) {
        err = bad_request(out.is_discarded() ? "the request body is not valid JSON"
                                             : "the request body must be a JSON object",
                          "", "invalid_json");
        return false;
    }
    return true;
}

bool absent(const json &obj, const char *key) {
    auto it = obj.find(key);
    return it == obj.end() || it->is_null();
}

std::string text_or(const json &obj, const char *key, const std::string &dflt) {
    if (!obj.is_object()) return dflt;
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : dflt;
}

bool flag_or(const json &obj, const char *key, bool dflt) {
    if (!obj.is_object()) return dflt;
    auto it = obj.find(key);
    return it != obj.end() && it->is_boolean() ? it->get<bool>() : dflt;
}

bool number(const json &obj, const char *key, double lo, double hi, float &out, api_error &err,
            const std::string &path) {
    if (absent(obj, key)) return true;
    const json &v = obj.at(key);
    if (!v.is_number()) {
        err = wrong(path, key, "must be a number", "invalid_type");
        return false;
    }
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
        err = wrong(path, key, "must be between " + json(lo).dump() + " and " + json(hi).dump(),
                    "invalid_value");
        return false;
    }
    out = static_cast<float>(d);
    return true;
}

bool integer(const json &obj, const char *key, int64_t lo, int64_t hi, int64_t &out, bool &present,
             api_error &err, const std::string &path) {
    present = false;
    if (absent(obj, key)) return true;
    const json &v = obj.at(key);
    const bool whole =
        v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                  std::trunc(v.get<double>()) == v.get<double>());
    if (!whole) {
        err = wrong(path, key, "must be an integer", "invalid_type");
        return false;
    }
    const double d = v.get<double>();
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
        err = wrong(path, key, "must be from " + std::to_string(lo) + " to " + std::to_string(hi),
                    "invalid_value");
        return false;
    }
    out     = v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(d);
    present = true;
    return true;
}

bool boolean(const json &obj, const char *key, bool &out, api_error &err, const std::string &path) {
    if (absent(obj, key)) return true;
    if (!obj.at(key).is_boolean()) {
        err = wrong(path, key, "must be a boolean", "invalid_type");
        return false;
    }
    out = obj.at(key).get<bool>();
    return true;
}

bool string(const json &obj, const char *key, std::string &out, api_error &err,
            const std::string &path) {
    if (absent(obj, key)) return true;
    if (!obj.at(key).is_string()) {
        err = wrong(path, key, "must be a string", "invalid_type");
        return false;
    }
    out = obj.at(key).get<std::string>();
    return true;
}

bool cache_salt(const json &obj, std::string &out, api_error &err) {
    if (!string(obj, "cache_salt", out, err)) return false;
    if (!absent(obj, "cache_salt") && (out.empty() || out.size() > max_cache_salt_bytes)) {
        err = wrong("", "cache_salt",
                    "must be a non-empty string of at most " +
                        std::to_string(max_cache_salt_bytes) + " bytes",
                    "invalid_value");
        out.clear();
        return false;
    }
    return true;
}

bool strings(const json &obj, const char *key, std::vector<std::string> &out, api_error &err,
             const std::string &path) {
    if (absent(obj, key)) return true;
    const json &v = obj.at(key);
    if (v.is_string()) {
        out.push_back(v.get<std::string>());
        return true;
    }
    const bool all = v.is_array() &&
                     std::all_of(v.begin(), v.end(), [](const json &x) { return x.is_string(); });
    if (!all) {
        err = wrong(path, key, "must be a string or an array of strings", "invalid_type");
        return false;
    }
    for (const auto &x : v) out.push_back(x.get<std::string>());
    return true;
}

bool schema_size_ok(const json &schema, const std::string &param, api_error &err) {
    const size_t n = schema.dump().size();
    if (n <= k_max_schema_bytes) return true;
    err = bad_request("the schema is " + std::to_string(n) + " bytes; at most " +
                          std::to_string(k_max_schema_bytes) +
                          " are accepted (a grammar is built from it for the request)",
                      param, "schema_too_large");
    return false;
}

bool enforceable_schema(const json &schema, bool strict, const std::string &param, api_error &err) {
    if (!schema_size_ok(schema, param, err)) return false;
    std::string where;
    const std::string bad = unsupported_schema_keyword(schema, strict, where);
    if (bad.empty()) return true;
    err = bad_request("schema keyword '" + bad + "' (at " + where +
                          ") cannot be enforced by this server's grammar",
                      param, "unsupported_schema");
    return false;
}

}  // namespace sf::fields
