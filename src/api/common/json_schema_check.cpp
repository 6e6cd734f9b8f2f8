#include "api/common/json_schema_check.h"

#include <set>

namespace sf {

namespace {

using json = nlohmann::json;

// Keywords llama.cpp's schema builder reads (common/json-schema.cpp) plus annotations.
const std::set<std::string> k_supported = {
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "minItems",
    "maxItems", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions",
    "pattern", "minLength", "maxLength", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum",
    // annotations: no effect on which documents match
    "$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated",
    "readOnly", "writeOnly", "$anchor", "strict", "name"};

// Value-level keywords the converter ignores; tolerated in tool schemas only.
const std::set<std::string> k_lenient = {
    "multipleOf",       "uniqueItems",       "minProperties",   "maxProperties",
    "propertyNames",    "patternProperties", "contentEncoding", "contentMediaType",
    "nullable",         "minContains",       "maxContains",     "unevaluatedProperties",
    "unevaluatedItems", "dependentRequired"};

bool format_supported(const std::string &f) {
    return f == "date" || f == "time" || f == "date-time" || f == "uuid" ||
           (f.size() == 5 && f.compare(0, 4, "uuid") == 0 && f[4] >= '1' && f[4] <= '5');
}

std::string check(const json &s, bool strict, const std::string &path, std::string &where) {
    if (!s.is_object()) return "";  // `true`/`false` schemas and garbage are the converter's
    const std::string type =
        s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
    for (const auto &[key, value] : s.items()) {
        bool ok = k_supported.count(key) > 0 || (!strict && k_lenient.count(key) > 0);
        if (ok && strict && key == "format")
            ok = !value.is_string() || format_supported(value.get<std::string>());
        // Bounds are enforced on integers only (common/json-schema.cpp build_integer).
        if (ok && strict && type == "number" &&
            (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
             key == "exclusiveMaximum"))
            ok = false;
        if (!ok) {
            where = path;
            return key == "format" ? "format: " + value.dump() : key;
        }
    }
    auto sub = [&](const json &child, const std::string &p) {
        return check(child, strict, p, where);
    };
    for (const char *map_key : {"properties", "$defs", "definitions"}) {
        if (!s.contains(map_key) || !s[map_key].is_object()) continue;
        for (const auto &[name, child] : s[map_key].items()) {
            if (auto k = sub(child, path + "/" + map_key + "/" + name); !k.empty()) return k;
        }
    }
    for (const char *list_key : {"anyOf", "oneOf", "allOf", "prefixItems"}) {
        if (!s.contains(list_key) || !s[list_key].is_array()) continue;
        for (size_t i = 0; i < s[list_key].size(); ++i) {
            if (auto k = sub(s[list_key][i], path + "/" + list_key + "/" + std::to_string(i));
                !k.empty())
                return k;
        }
    }
    for (const char *one_key : {"items", "additionalProperties"}) {
        if (s.contains(one_key)) {
            if (auto k = sub(s[one_key], path + "/" + one_key); !k.empty()) return k;
        }
    }
    return "";
}

}  // namespace

std::string unsupported_schema_keyword(const nlohmann::json &schema, bool strict,
                                       std::string &where) {
    return check(schema, strict, "#", where);
}

}  // namespace sf
