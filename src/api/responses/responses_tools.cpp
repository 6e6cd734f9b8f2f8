#include "api/responses/responses_tools.h"

#include <algorithm>

#include "api/common/json_fields.h"

namespace sf {

using json = nlohmann::json;

namespace {

// What a custom (freeform) tool takes: its text as one string.
const char *k_custom_parameters =
    R"({"type":"object","properties":{"input":{"type":"string","description":"the tool's input, as free-form text"}},"required":["input"],"additionalProperties":false})";

// Appends the tools a `tools` array (top level or a namespace's) can call to `out`.
void collect(const json &tools, const std::string &ns, std::vector<responses_tool> &out) {
    if (!tools.is_array()) return;
    for (const auto &t : tools) {
        if (!t.is_object()) continue;
        const std::string type = fields::text_or(t, "type");
        const json &name       = t.contains("name") ? t["name"] : json();
        if (type == "namespace" && ns.empty() && name.is_string() && t.contains("tools")) {
            collect(t["tools"], name.get<std::string>(), out);
        } else if ((type == "function" || type == "custom") && name.is_string()) {
            const std::string n = name.get<std::string>();
            out.push_back({responses_tool_map::chat_name(ns, n), n, ns, type == "custom"});
        }
    }
}

// A custom tool's description, with the format its input follows when it names one.
std::string custom_description(const json &t) {
    std::string d = t.contains("description") && t["description"].is_string()
                        ? t["description"].get<std::string>()
                        : "";
    const json &f = t.contains("format") ? t["format"] : json();
    if (fields::text_or(f, "type") == "grammar" && f.contains("definition") &&
        f["definition"].is_string()) {
        d += (d.empty() ? "" : "\n\n") + std::string("The input follows this ") +
             fields::text_or(f, "syntax") + " grammar:\n" + f["definition"].get<std::string>();
    }
    return d;
}

// One function or custom tool at `path` → a chat tool named `chat_name`.
bool callable(const json &t, const std::string &type, const std::string &ns,
              const std::string &path, chat_options &chat, api_error &err) {
    tool_spec spec;
    std::string name;
    if (!fields::string(t, "name", name, err, path + ".")) return false;
    if (name.empty()) {
        err = bad_request("a " + type + " tool needs a name", path + ".name",
                          "missing_required_parameter");
        return false;
    }
    spec.name = responses_tool_map::chat_name(ns, name);
    if (type == "custom") {
        spec.description = custom_description(t);
        spec.parameters  = k_custom_parameters;
        chat.tools.push_back(std::move(spec));
        return true;
    }
    if (!fields::string(t, "description", spec.description, err, path + ".")) return false;
    const json params = fields::absent(t, "parameters")
                            ? json{{"type", "object"}, {"properties", json::object()}}
                            : t["parameters"];
    if (!params.is_object()) {
        err = bad_request("'parameters' must be a JSON schema object", path + ".parameters",
                          "invalid_type");
        return false;
    }
    if (!fields::enforceable_schema(params, false, path + ".parameters", err)) return false;
    spec.parameters = params.dump();
    chat.tools.push_back(std::move(spec));
    return true;
}

void note_skipped(std::vector<std::string> &skipped, const std::string &type) {
    const std::string t = type.empty() ? "(no type)" : type;
    if (std::find(skipped.begin(), skipped.end(), t) == skipped.end()) skipped.push_back(t);
}

// A tool_choice object's tool → its chat name; false with a 400 when no offered tool has it.
bool named_choice(const json &tc, const chat_options &chat, std::string &out, api_error &err) {
    std::string name, ns;
    if (!fields::string(tc, "name", name, err, "tool_choice.") ||
        !fields::string(tc, "namespace", ns, err, "tool_choice."))
        return false;
    out                = responses_tool_map::chat_name(ns, name);
    const bool offered = std::any_of(chat.tools.begin(), chat.tools.end(),
                                     [&](const tool_spec &t) { return t.name == out; });
    if (name.empty() || !offered) {
        err = bad_request("'tool_choice' names the tool '" + name + "', which is not in 'tools'",
                          "tool_choice", "invalid_value");
        return false;
    }
    return true;
}

// {"type":"allowed_tools","mode":"auto"|"required","tools":[{"type":"function","name"},…]}:
// the offered tools narrowed to the listed ones.
bool allowed_tools(const json &tc, chat_options &chat, api_error &err) {
    const std::string mode = fields::text_or(tc, "mode", "auto");
    if (mode != "auto" && mode != "required") {
        err = bad_request("'tool_choice.mode' must be auto or required", "tool_choice.mode",
                          "invalid_value");
        return false;
    }
    if (!tc.contains("tools") || !tc["tools"].is_array()) {
        err = bad_request("'tool_choice.tools' must be an array", "tool_choice.tools",
                          "invalid_type");
        return false;
    }
    std::vector<std::string> keep;
    for (const auto &t : tc["tools"]) {
        if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) continue;
        std::string ns = t.contains("namespace") && t["namespace"].is_string()
                             ? t["namespace"].get<std::string>()
                             : "";
        keep.push_back(responses_tool_map::chat_name(ns, t["name"].get<std::string>()));
    }
    std::erase_if(chat.tools, [&](const tool_spec &t) {
        return std::find(keep.begin(), keep.end(), t.name) == keep.end();
    });
    chat.tool_choice = chat.tools.empty()   ? tool_choice_mode::NONE
                       : mode == "required" ? tool_choice_mode::REQUIRED
                                            : tool_choice_mode::AUTO;
    return true;
}

}  // namespace

responses_tool_map responses_tool_map::of(const json &tools) {
    responses_tool_map m;
    collect(tools, "", m.tools_);
    return m;
}

const responses_tool *responses_tool_map::find(const std::string &chat_name) const {
    for (const auto &t : tools_)
        if (t.chat_name == chat_name) return &t;
    return nullptr;
}

std::string responses_tool_map::chat_name(const std::string &ns, const std::string &name) {
    if (ns.empty()) return name;
    const bool joined = ns.size() >= 2 && ns.compare(ns.size() - 2, 2, "__") == 0;
    return ns + (joined ? "" : "__") + name;
}

bool responses_tool_map::is_custom(const std::string &chat_name) const {
    const responses_tool *t = find(chat_name);
    return t && t->custom;
}

bool parse_responses_tools(const json &j, chat_options &chat, std::vector<std::string> &skipped,
                           api_error &err) {
    if (fields::absent(j, "tools")) return true;
    if (!j["tools"].is_array()) {
        err = bad_request("'tools' must be an array", "tools", "invalid_type");
        return false;
    }
    const json &tools = j["tools"];
    for (size_t i = 0; i < tools.size(); ++i) {
        const json &t       = tools[i];
        const std::string p = "tools[" + std::to_string(i) + "]";
        if (!t.is_object()) {
            err = bad_request("each tool must be an object", p, "invalid_type");
            return false;
        }
        const std::string type =
            t.contains("type") && t["type"].is_string() ? t["type"].get<std::string>() : "";
        if (type == "function" || type == "custom") {
            if (!callable(t, type, "", p, chat, err)) return false;
        } else if (type == "namespace") {
            std::string ns;
            if (!fields::string(t, "name", ns, err, p + ".")) return false;
            if (ns.empty()) {
                err = bad_request("a namespace tool needs a name", p + ".name",
                                  "missing_required_parameter");
                return false;
            }
            const json &inner = t.contains("tools") ? t["tools"] : json();
            if (!inner.is_array()) {
                err = bad_request("a namespace tool's 'tools' must be an array", p + ".tools",
                                  "invalid_type");
                return false;
            }
            for (size_t k = 0; k < inner.size(); ++k) {
                const json &it         = inner[k];
                const std::string ip   = p + ".tools[" + std::to_string(k) + "]";
                const std::string kind = fields::text_or(it, "type");
                if (kind == "function" || kind == "custom") {
                    if (!callable(it, kind, ns, ip, chat, err)) return false;
                } else {
                    note_skipped(skipped, ns + "/" + (kind.empty() ? "(no type)" : kind));
                }
            }
        } else {
            note_skipped(skipped, type);
        }
    }
    return true;
}

bool parse_responses_tool_choice(const json &j, chat_options &chat, api_error &err) {
    if (fields::absent(j, "tool_choice")) return true;
    const json &tc         = j["tool_choice"];
    const std::string type = tc.is_object() && tc.contains("type") && tc["type"].is_string()
                                 ? tc["type"].get<std::string>()
                                 : "";
    if (tc == "auto") {
        chat.tool_choice = tool_choice_mode::AUTO;
    } else if (tc == "none") {
        chat.tool_choice = tool_choice_mode::NONE;
    } else if (tc == "required") {
        chat.tool_choice = tool_choice_mode::REQUIRED;
    } else if (type == "function" || type == "custom") {
        chat.tool_choice = tool_choice_mode::NAMED;
        return named_choice(tc, chat, chat.tool_name, err);
    } else if (type == "allowed_tools") {
        return allowed_tools(tc, chat, err);
    } else if (!type.empty()) {
        err = bad_request("'tool_choice' forces a '" + type +
                              "' tool, which this server does not run (only function and "
                              "custom tools are offered to the model)",
                          "tool_choice", "unsupported_value");
        return false;
    } else {
        err = bad_request(
            "'tool_choice' must be \"auto\", \"none\", \"required\" or an object with a 'type' "
            "(function, custom, allowed_tools)",
            "tool_choice", "invalid_value");
        return false;
    }
    if (chat.tool_choice == tool_choice_mode::REQUIRED && chat.tools.empty()) {
        err = bad_request("'tool_choice' required needs a function or custom tool in 'tools'",
                          "tool_choice", "invalid_value");
        return false;
    }
    return true;
}

}  // namespace sf
