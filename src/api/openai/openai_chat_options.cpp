#include "api/openai/openai_chat_options.h"

#include "api/common/json_fields.h"
#include "api/common/json_schema_check.h"

namespace sf {

using json = nlohmann::json;

namespace {

bool present(const json &j, const char *key) {
    return j.contains(key) && !j[key].is_null();
}

bool parse_tools(const json &j, chat_options &out, api_error &err) {
    if (!present(j, "tools")) return true;
    if (!j["tools"].is_array()) {
        err = bad_request("'tools' must be an array", "tools", "invalid_type");
        return false;
    }
    for (size_t i = 0; i < j["tools"].size(); ++i) {
        const auto &t       = j["tools"][i];
        const std::string p = "tools[" + std::to_string(i) + "]";
        if (!t.is_object() || (t.contains("type") && t["type"] != "function") ||
            !t.contains("function") || !t["function"].is_object()) {
            err = bad_request("each tool must be {\"type\": \"function\", \"function\": {...}}", p,
                              "invalid_type");
            return false;
        }
        const auto &f = t["function"];
        if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty()) {
            err = bad_request("a function tool needs a non-empty string 'name'",
                              p + ".function.name", "invalid_type");
            return false;
        }
        tool_spec spec;
        spec.name = f["name"].get<std::string>();
        if (f.contains("description") && f["description"].is_string())
            spec.description = f["description"].get<std::string>();
        const json params = f.contains("parameters") ? f["parameters"] : json();
        if (!tool_parameters_text(params, p + ".function.parameters", spec.parameters, err))
            return false;
        out.tools.push_back(std::move(spec));
    }
    return true;
}

bool parse_tool_choice(const json &j, chat_options &out, api_error &err) {
    if (!present(j, "tool_choice")) return true;
    const auto &tc = j["tool_choice"];
    if (tc.is_string()) {
        const auto s = tc.get<std::string>();
        if (s == "auto") {
            out.tool_choice = tool_choice_mode::AUTO;
        } else if (s == "none") {
            out.tool_choice = tool_choice_mode::NONE;
        } else if (s == "required") {
            out.tool_choice = tool_choice_mode::REQUIRED;
        } else {
            err = bad_request(
                "'tool_choice' must be auto, none, required or an object naming a "
                "function",
                "tool_choice", "invalid_value");
            return false;
        }
    } else if (tc.is_object() && tc.contains("function") && tc["function"].is_object() &&
               tc["function"].contains("name") && tc["function"]["name"].is_string()) {
        out.tool_choice = tool_choice_mode::NAMED;
        out.tool_name   = tc["function"]["name"].get<std::string>();
    } else {
        err = bad_request(
            "'tool_choice' must be a string or {\"type\": \"function\", \"function\": {\"name\": "
            "…}}",
            "tool_choice", "invalid_type");
        return false;
    }
    const bool forced =
        out.tool_choice == tool_choice_mode::REQUIRED || out.tool_choice == tool_choice_mode::NAMED;
    if (forced && out.tools.empty()) {
        err = bad_request("'tool_choice' forces a tool call but no 'tools' were given",
                          "tool_choice", "invalid_value");
        return false;
    }
    if (out.tool_choice == tool_choice_mode::NAMED) {
        bool found = false;
        for (const auto &t : out.tools) found = found || t.name == out.tool_name;
        if (!found) {
            err = bad_request("'tool_choice' names function '" + out.tool_name +
                                  "', which is not among the tools",
                              "tool_choice", "invalid_value");
            return false;
        }
    }
    return true;
}

bool parse_response_format(const json &j, chat_options &out, api_error &err) {
    if (!present(j, "response_format")) return true;
    const auto &rf = j["response_format"];
    if (!rf.is_object() || !rf.contains("type") || !rf["type"].is_string()) {
        err = bad_request("'response_format' must be an object with a 'type'", "response_format",
                          "invalid_type");
        return false;
    }
    const auto type = rf["type"].get<std::string>();
    if (type == "text") return true;
    if (type == "json_object") {
        out.json_schema = R"({"type":"object"})";
        return true;
    }
    if (type != "json_schema") {
        err = bad_request("response_format type must be text, json_object or json_schema",
                          "response_format.type", "invalid_value");
        return false;
    }
    if (!rf.contains("json_schema") || !rf["json_schema"].is_object() ||
        !rf["json_schema"].contains("schema") || !rf["json_schema"]["schema"].is_object()) {
        err = bad_request("response_format json_schema needs 'json_schema.schema' (an object)",
                          "response_format.json_schema.schema", "invalid_value");
        return false;
    }
    json schema = rf["json_schema"]["schema"];
    if (schema.empty()) schema = {{"type", "object"}};
    if (!fields::schema_size_ok(schema, "response_format.json_schema.schema", err)) return false;
    std::string where;
    const auto bad = unsupported_schema_keyword(schema, /*strict=*/true, where);
    if (!bad.empty()) {
        err = bad_request("response_format schema keyword '" + bad + "' (at " + where +
                              ") cannot be enforced by this server's grammar",
                          "response_format.json_schema.schema", "unsupported_schema");
        return false;
    }
    out.json_schema = schema.dump();
    return true;
}

bool parse_template_kwargs(const json &j, chat_options &out, api_error &err) {
    if (!present(j, "chat_template_kwargs")) return true;
    const auto &kw = j["chat_template_kwargs"];
    if (!kw.is_object()) {
        err = bad_request("'chat_template_kwargs' must be an object", "chat_template_kwargs",
                          "invalid_type");
        return false;
    }
    for (const auto &[k, v] : kw.items()) {
        if (k == "enable_thinking" && !v.is_boolean()) {
            err = bad_request("'chat_template_kwargs.enable_thinking' must be a boolean",
                              "chat_template_kwargs.enable_thinking", "invalid_type");
            return false;
        }
        out.template_kwargs.emplace_back(k, v.dump());
    }
    return true;
}

}  // namespace

bool tool_parameters_text(const json &params, const std::string &param_name, std::string &out,
                          api_error &err) {
    if (params.is_null() || (params.is_object() && params.empty())) {
        out = R"({"type":"object","properties":{}})";  // a tool without arguments
        return true;
    }
    if (!params.is_object()) {
        err =
            bad_request("tool parameters must be a JSON Schema object", param_name, "invalid_type");
        return false;
    }
    if (!fields::schema_size_ok(params, param_name, err)) return false;
    std::string where;
    const auto bad = unsupported_schema_keyword(params, /*strict=*/false, where);
    if (!bad.empty()) {
        err = bad_request("schema keyword '" + bad + "' (at " + where +
                              ") cannot be enforced by this server's grammar",
                          param_name, "unsupported_schema");
        return false;
    }
    out = params.dump();
    return true;
}

bool apply_reasoning_effort(const std::string &e, chat_options &out) {
    if (e == "none" || e == "minimal") {
        out.reasoning = 0;
        return true;
    }
    if (e == "low" || e == "medium" || e == "high" || e == "xhigh") {
        out.reasoning        = 1;
        out.reasoning_effort = e == "xhigh" ? "high" : e;  // templates know low/medium/high
        return true;
    }
    return false;
}

bool parse_openai_chat_options(const json &j, chat_options &out, api_error &err) {
    if (!parse_tools(j, out, err) || !parse_tool_choice(j, out, err)) return false;
    if (present(j, "parallel_tool_calls")) {
        if (!j["parallel_tool_calls"].is_boolean()) {
            err = bad_request("'parallel_tool_calls' must be a boolean", "parallel_tool_calls",
                              "invalid_type");
            return false;
        }
        out.parallel_tool_calls = j["parallel_tool_calls"].get<bool>();
    }
    if (!parse_response_format(j, out, err) || !parse_template_kwargs(j, out, err)) return false;
    if (present(j, "reasoning_effort")) {
        const auto &re = j["reasoning_effort"];
        if (!re.is_string() || !apply_reasoning_effort(re.get<std::string>(), out)) {
            err =
                bad_request("'reasoning_effort' must be none, minimal, low, medium, high or xhigh",
                            "reasoning_effort", "invalid_value");
            return false;
        }
    }
    return true;
}

}  // namespace sf
