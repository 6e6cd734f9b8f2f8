#include "api/responses_request.h"

#include <climits>

#include "api/json_fields.h"

namespace sf {

using json = nlohmann::json;

namespace {

// Text of a message item's content: a string or parts input_text / output_text / refusal.
bool item_text(const json &c, const std::string &path, std::string &out, api_error &err) {
    if (c.is_string()) {
        out = c.get<std::string>();
        return true;
    }
    if (!c.is_array()) {
        err = bad_request("content must be a string or an array of parts", path, "invalid_type");
        return false;
    }
    for (size_t i = 0; i < c.size(); ++i) {
        const json &p          = c[i];
        const std::string type = p.is_object() ? p.value("type", "") : "";
        const std::string pp   = path + "[" + std::to_string(i) + "]";
        if (type == "input_text" || type == "output_text" || type == "text") {
            std::string t;
            if (!fields::string(p, "text", t, err, pp + ".")) return false;
            out += t;
        } else if (type == "refusal") {
            std::string t;
            if (!fields::string(p, "refusal", t, err, pp + ".")) return false;
            out += t;
        } else if (type == "input_image" || type == "input_file" || type == "input_audio") {
            err = bad_request(
                "content part type '" + type + "' is not supported: the loaded model is text-only",
                pp, "unsupported_content");
            return false;
        } else {
            err = bad_request("unknown content part type '" + type + "'", pp, "invalid_value");
            return false;
        }
    }
    return true;
}

// The assistant message that function_call items attach to (a new one unless the last is one).
chat_message &assistant_turn(std::vector<chat_message> &msgs) {
    if (msgs.empty() || msgs.back().role != "assistant")
        msgs.push_back({"assistant", "", "", "", "", {}});
    return msgs.back();
}

bool parse_input(const json &j, std::vector<chat_message> &msgs, std::string &system,
                 api_error &err) {
    if (fields::absent(j, "input")) {
        err = bad_request("'input' is required", "input", "missing_required_parameter");
        return false;
    }
    const json &in = j["input"];
    if (in.is_string()) {
        msgs.push_back({"user", in.get<std::string>(), "", "", "", {}});
        return true;
    }
    if (!in.is_array() || in.empty()) {
        err = bad_request("'input' must be a string or a non-empty array of items", "input",
                          "invalid_type");
        return false;
    }
    std::map<std::string, std::string> call_names;  // call_id → function name (for tool turns)
    std::string pending_reasoning;                  // a reasoning item precedes its assistant turn
    for (size_t i = 0; i < in.size(); ++i) {
        const json &it      = in[i];
        const std::string p = "input[" + std::to_string(i) + "]";
        if (!it.is_object()) {
            err = bad_request("each input item must be an object", p, "invalid_type");
            return false;
        }
        const std::string type = it.value("type", it.contains("role") ? "message" : "");
        if (type == "message") {
            chat_message m;
            if (!fields::string(it, "role", m.role, err, p + ".")) return false;
            if (!item_text(it.contains("content") ? it["content"] : json(""), p + ".content",
                           m.content, err))
                return false;
            if (m.role == "system" || m.role == "developer") {
                system += (system.empty() ? "" : "\n\n") + m.content;
                continue;
            }
            if (m.role != "user" && m.role != "assistant") {
                err = bad_request("unknown role '" + m.role + "'", p + ".role", "invalid_value");
                return false;
            }
            if (m.role == "assistant") {
                m.reasoning_content = std::move(pending_reasoning);
                pending_reasoning.clear();
            }
            msgs.push_back(std::move(m));
        } else if (type == "function_call") {
            tool_call tc;
            if (!fields::string(it, "call_id", tc.id, err, p + ".") ||
                !fields::string(it, "name", tc.name, err, p + ".") ||
                !fields::string(it, "arguments", tc.arguments, err, p + "."))
                return false;
            if (tc.name.empty()) {
                err = bad_request("a function_call item needs a name", p + ".name",
                                  "missing_required_parameter");
                return false;
            }
            call_names[tc.id] = tc.name;
            chat_message &a   = assistant_turn(msgs);
            if (!pending_reasoning.empty()) a.reasoning_content = std::move(pending_reasoning);
            pending_reasoning.clear();
            a.tool_calls.push_back(std::move(tc));
        } else if (type == "function_call_output") {
            chat_message m{"tool", "", "", "", "", {}};
            if (!fields::string(it, "call_id", m.tool_call_id, err, p + ".")) return false;
            const json out = it.contains("output") ? it["output"] : json("");
            if (!item_text(out, p + ".output", m.content, err)) return false;
            m.name = call_names.count(m.tool_call_id) ? call_names[m.tool_call_id] : "";
            msgs.push_back(std::move(m));
        } else if (type == "reasoning") {
            // Earlier reasoning, replayed by clients such as Codex: kept for the template.
            for (const char *key : {"content", "summary"}) {
                if (!it.contains(key) || !it[key].is_array()) continue;
                for (const auto &part : it[key]) {
                    if (part.is_object() && part.contains("text") && part["text"].is_string())
                        pending_reasoning += part["text"].get<std::string>();
                }
                if (!pending_reasoning.empty()) break;
            }
        } else {
            err = bad_request("input item type '" + type + "' is not supported", p + ".type",
                              "unsupported_value");
            return false;
        }
    }
    return true;
}

bool parse_tools(const json &j, chat_options &chat, api_error &err) {
    if (fields::absent(j, "tools")) return true;
    if (!j["tools"].is_array()) {
        err = bad_request("'tools' must be an array", "tools", "invalid_type");
        return false;
    }
    for (size_t i = 0; i < j["tools"].size(); ++i) {
        const json &t          = j["tools"][i];
        const std::string p    = "tools[" + std::to_string(i) + "]";
        const std::string type = t.is_object() ? t.value("type", "") : "";
        if (type != "function") {
            err = bad_request("tool type '" + type + "' is not supported (only 'function')",
                              p + ".type", "unsupported_value");
            return false;
        }
        tool_spec spec;
        if (!fields::string(t, "name", spec.name, err, p + ".") ||
            !fields::string(t, "description", spec.description, err, p + "."))
            return false;
        if (spec.name.empty()) {
            err = bad_request("a function tool needs a name", p + ".name",
                              "missing_required_parameter");
            return false;
        }
        const json params = fields::absent(t, "parameters")
                                ? json{{"type", "object"}, {"properties", json::object()}}
                                : t["parameters"];
        if (!params.is_object()) {
            err = bad_request("'parameters' must be a JSON schema object", p + ".parameters",
                              "invalid_type");
            return false;
        }
        if (!fields::enforceable_schema(params, false, p + ".parameters", err)) return false;
        spec.parameters = params.dump();
        chat.tools.push_back(std::move(spec));
    }
    return true;
}

bool parse_tool_choice(const json &j, chat_options &chat, api_error &err) {
    if (fields::absent(j, "tool_choice")) return true;
    const json &tc = j["tool_choice"];
    if (tc == "auto") {
        chat.tool_choice = tool_choice_mode::AUTO;
    } else if (tc == "none") {
        chat.tool_choice = tool_choice_mode::NONE;
    } else if (tc == "required") {
        chat.tool_choice = tool_choice_mode::REQUIRED;
    } else if (tc.is_object() && tc.value("type", "") == "function" && tc.contains("name") &&
               tc["name"].is_string()) {
        chat.tool_choice = tool_choice_mode::NAMED;
        chat.tool_name   = tc["name"].get<std::string>();
    } else {
        err = bad_request(
            "'tool_choice' must be \"auto\", \"none\", \"required\" or {\"type\":\"function\","
            "\"name\":…}",
            "tool_choice", "invalid_value");
        return false;
    }
    if (chat.tool_choice != tool_choice_mode::AUTO && chat.tool_choice != tool_choice_mode::NONE &&
        chat.tools.empty()) {
        err = bad_request("'tool_choice' requires 'tools'", "tool_choice", "invalid_value");
        return false;
    }
    return true;
}

// text.format: text | json_object | json_schema {name, schema, strict}.
bool parse_text_format(const json &j, chat_options &chat, api_error &err) {
    if (fields::absent(j, "text") || !j["text"].is_object() || fields::absent(j["text"], "format"))
        return true;
    const json &f          = j["text"]["format"];
    const std::string type = f.is_object() ? f.value("type", "") : "";
    if (type == "text") return true;
    if (type == "json_object") {
        chat.json_schema = R"({"type":"object"})";
        return true;
    }
    if (type == "json_schema" && f.contains("schema") && f["schema"].is_object()) {
        if (!fields::enforceable_schema(f["schema"], true, "text.format.schema", err)) return false;
        chat.json_schema = f["schema"].dump();
        return true;
    }
    err = bad_request("'text.format' must be text, json_object or json_schema with a 'schema'",
                      "text.format", "invalid_value");
    return false;
}

// reasoning.effort: none/minimal turn thinking off; other levels turn it on and are passed to
// templates that read `reasoning_effort`.
bool parse_reasoning(const json &j, chat_options &chat, api_error &err) {
    if (fields::absent(j, "reasoning")) return true;
    const json &r = j["reasoning"];
    if (!r.is_object()) {
        err = bad_request("'reasoning' must be an object", "reasoning", "invalid_type");
        return false;
    }
    std::string effort;
    if (!fields::string(r, "effort", effort, err, "reasoning.")) return false;
    if (effort.empty()) return true;
    static const char *known[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
    if (std::find(std::begin(known), std::end(known), effort) == std::end(known)) {
        err = bad_request("'reasoning.effort' must be none, minimal, low, medium, high or xhigh",
                          "reasoning.effort", "invalid_value");
        return false;
    }
    chat.reasoning = effort == "none" || effort == "minimal" ? 0 : 1;
    if (chat.reasoning == 1) chat.reasoning_effort = effort == "xhigh" ? "high" : effort;
    return true;
}

bool refuse(const json &j, const char *key, const std::string &why, api_error &err) {
    if (fields::absent(j, key) || j[key] == false) return true;
    err = bad_request(std::string("'") + key + "' " + why, key, "unsupported_parameter");
    return false;
}

}  // namespace

bool parse_responses_request(const std::string &body, generate_request &out,
                             responses_options &opts, api_error &err) {
    json j;
    if (!fields::parse_object(body, j, err)) return false;
    if (!refuse(j, "previous_response_id",
                "is not supported: this server stores no responses; send the whole input", err) ||
        !refuse(j, "conversation", "is not supported: this server stores no conversations", err))
        return false;
    out.is_chat = true;
    if (!fields::string(j, "model", out.model, err) ||
        !fields::boolean(j, "stream", opts.stream, err) ||
        !fields::boolean(j, "background", opts.background, err) ||
        !fields::boolean(j, "store", opts.store, err))
        return false;
    if (opts.background && !opts.store) {
        err = bad_request("background responses must be stored: 'background' requires 'store' true",
                          "store", "invalid_value");
        return false;
    }
    auto &s       = out.sampling;
    s.temperature = 1.0f;
    s.top_p       = 1.0f;
    s.top_k       = 0;
    s.min_p       = 0.0f;
    s.max_tokens  = INT32_MAX;
    int64_t v     = 0;
    bool present  = false;
    if (!fields::number(j, "temperature", 0, 2, s.temperature, err) ||
        !fields::number(j, "top_p", 0, 1, s.top_p, err) ||
        !fields::integer(j, "max_output_tokens", 1, INT32_MAX, v, present, err))
        return false;
    if (present) s.max_tokens = static_cast<int32_t>(v);
    if (!fields::boolean(j, "parallel_tool_calls", out.chat.parallel_tool_calls, err)) return false;

    std::string system;
    if (!fields::string(j, "instructions", system, err)) return false;
    if (!parse_input(j, out.messages, system, err) || !parse_tools(j, out.chat, err) ||
        !parse_tool_choice(j, out.chat, err) || !parse_text_format(j, out.chat, err) ||
        !parse_reasoning(j, out.chat, err))
        return false;
    if (!system.empty())
        out.messages.insert(out.messages.begin(), {"system", system, "", "", "", {}});

    // Fields the response object repeats as the request set them.
    for (const char *k :
         {"instructions", "max_output_tokens", "metadata", "parallel_tool_calls", "reasoning",
          "temperature", "text", "tool_choice", "tools", "top_p", "user"}) {
        if (j.contains(k)) opts.echo[k] = j[k];
    }
    return true;
}

}  // namespace sf
