#include "api/responses/responses_input.h"

#include <algorithm>
#include <map>

#include "api/common/json_fields.h"
#include "api/common/media_refusal.h"
#include "api/responses/responses_tools.h"

namespace sf {

using json = nlohmann::json;

namespace {

// Item types whose tools ran elsewhere (or that only the service that made them can read):
// nothing in them is for this model, and the client replays them every turn.
const char *const k_dropped[] = {
    "web_search_call",    "image_generation_call", "file_search_call", "code_interpreter_call",
    "tool_search_call",   "tool_search_output",    "mcp_list_tools",   "compaction",
    "compaction_summary", "ghost_snapshot"};

const char *k_image_placeholder = "[image omitted: this model cannot see images]";

std::string type_of(const json &o) {
    return o.is_object() && o.contains("type") && o["type"].is_string()
               ? o["type"].get<std::string>()
               : "";
}

// The text of a message's `content` or a tool's `output`: a string or an array of parts.
// Text parts (input_text / output_text / text; refusal in messages) are joined: directly in a
// message, by newlines in a tool output. An image, file or audio part in a message is a 400
// (the model is text-only and the user should know); in a tool output an image or file
// becomes a short placeholder, since the client re-sends the item on every later turn.
bool parts_text(const json &c, bool tool_output, const std::string &path, std::string &out,
                api_error &err) {
    if (c.is_null()) return true;
    if (c.is_string()) {
        out = c.get<std::string>();
        return true;
    }
    if (!c.is_array()) {
        err = bad_request(std::string(tool_output ? "'output'" : "content") +
                              " must be a string or an array of content parts",
                          path, "invalid_type");
        return false;
    }
    for (size_t i = 0; i < c.size(); ++i) {
        const json &p          = c[i];
        const std::string type = type_of(p);
        const std::string pp   = path + "[" + std::to_string(i) + "]";
        const bool media = type == "input_image" || type == "input_file" || type == "input_audio";
        std::string t;
        if (type == "input_text" || type == "output_text" || type == "text") {
            if (!fields::string(p, "text", t, err, pp + ".")) return false;
        } else if (type == "refusal" && !tool_output) {
            if (!fields::string(p, "refusal", t, err, pp + ".")) return false;
        } else if (media && !tool_output) {
            const bool inline_url =
                type == "input_image" && p.contains("image_url") && p["image_url"].is_string();
            if (inline_url && !check_inline_image(p["image_url"].get_ref<const std::string &>(),
                                                  true, pp + ".image_url", pp, err))
                return false;
            err = media_refusal(type, pp);
            return false;
        } else if (type == "input_image") {
            t = k_image_placeholder;
        } else if (type == "input_file") {
            std::string name;
            if (!fields::string(p, "filename", name, err, pp + ".")) return false;
            t = "[file" + (name.empty() ? "" : " '" + name + "'") +
                " omitted: this model cannot read attached files]";
        } else {
            err = bad_request("unknown content part type '" + type + "'", pp, "invalid_value");
            return false;
        }
        out += (tool_output && i ? "\n" : "") + t;
    }
    return true;
}

/** The conversion state across items. */
struct input_reader {
    std::vector<chat_message> &msgs;
    std::string &system;
    std::map<std::string, std::string> call_names;  // call_id → the called tool's chat name
    std::string pending_reasoning;                  // reasoning precedes its assistant turn

    // The assistant message calls attach to (a new one unless the last is one).
    chat_message &assistant_turn() {
        if (msgs.empty() || msgs.back().role != "assistant")
            msgs.push_back({"assistant", "", "", "", "", {}});
        chat_message &a = msgs.back();
        if (!pending_reasoning.empty()) a.reasoning_content = std::move(pending_reasoning);
        pending_reasoning.clear();
        return a;
    }

    void call(std::string id, std::string chat_name, std::string arguments) {
        call_names[id] = chat_name;
        assistant_turn().tool_calls.push_back(
            {std::move(id), std::move(chat_name), std::move(arguments)});
    }

    void result(std::string call_id, std::string text) {
        chat_message m{"tool", std::move(text), "", std::move(call_id), "", {}};
        auto it = call_names.find(m.tool_call_id);
        if (it != call_names.end()) m.name = it->second;
        msgs.push_back(std::move(m));
    }

    bool message(const json &it, const std::string &p, api_error &err) {
        chat_message m;
        if (!fields::string(it, "role", m.role, err, p + ".")) return false;
        if (!parts_text(it.contains("content") ? it["content"] : json(), false, p + ".content",
                        m.content, err))
            return false;
        if (m.role == "system" || m.role == "developer") {
            system += (system.empty() ? "" : "\n\n") + m.content;
            return true;
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
        return true;
    }

    // function_call (arguments: JSON text) or custom_tool_call (input: the tool's string,
    // which the model wrote as {"input": …}).
    bool named_call(const json &it, const std::string &type, const std::string &p, api_error &err) {
        const bool custom = type == "custom_tool_call";
        std::string id, name, ns, text;
        if (!fields::string(it, "call_id", id, err, p + ".") ||
            !fields::string(it, "name", name, err, p + ".") ||
            !fields::string(it, "namespace", ns, err, p + ".") ||
            !fields::string(it, custom ? "input" : "arguments", text, err, p + "."))
            return false;
        if (name.empty()) {
            err = bad_request("a " + type + " item needs a name", p + ".name",
                              "missing_required_parameter");
            return false;
        }
        call(std::move(id), responses_tool_map::chat_name(ns, name),
             custom ? json{{"input", text}}.dump() : text);
        return true;
    }

    bool local_shell_call(const json &it, const std::string &p, api_error &err) {
        std::string id;
        if (!fields::string(it, "call_id", id, err, p + ".")) return false;
        if (id.empty() && !fields::string(it, "id", id, err, p + ".")) return false;
        const json action = it.contains("action") ? it["action"] : json::object();
        call(std::move(id), "local_shell", action.is_object() ? action.dump() : "{}");
        return true;
    }

    bool tool_output(const json &it, const std::string &p, api_error &err) {
        std::string id, text;
        if (!fields::string(it, "call_id", id, err, p + ".")) return false;
        if (id.empty() && !fields::string(it, "id", id, err, p + ".")) return false;
        if (!parts_text(it.contains("output") ? it["output"] : json(), true, p + ".output", text,
                        err))
            return false;
        result(std::move(id), std::move(text));
        return true;
    }

    // Earlier reasoning, replayed by clients such as Codex: its text (content, else summary)
    // is kept for the template; encrypted_content is never read.
    void reasoning(const json &it) {
        for (const char *key : {"content", "summary"}) {
            if (!it.contains(key) || !it[key].is_array()) continue;
            for (const auto &part : it[key]) {
                if (part.is_object() && part.contains("text") && part["text"].is_string())
                    pending_reasoning += part["text"].get<std::string>();
            }
            if (!pending_reasoning.empty()) break;
        }
    }

    bool item(const json &it, const std::string &p, api_error &err) {
        if (!it.is_object()) {
            err = bad_request("each input item must be an object", p, "invalid_type");
            return false;
        }
        const std::string type =
            it.contains("type") ? type_of(it) : (it.contains("role") ? "message" : "");
        if (type == "message") return message(it, p, err);
        if (type == "function_call" || type == "custom_tool_call")
            return named_call(it, type, p, err);
        if (type == "local_shell_call") return local_shell_call(it, p, err);
        if (type == "function_call_output" || type == "custom_tool_call_output" ||
            type == "local_shell_call_output")
            return tool_output(it, p, err);
        if (type == "reasoning") {
            reasoning(it);
            return true;
        }
        if (std::find(std::begin(k_dropped), std::end(k_dropped), type) != std::end(k_dropped))
            return true;
        if (type == "item_reference") {
            const std::string id =
                it.contains("id") && it["id"].is_string() ? it["id"].get<std::string>() : "";
            err = bad_request("item_reference '" + id +
                                  "' cannot be resolved: this server keeps no items; send the "
                                  "item itself",
                              p, "item_not_found");
            return false;
        }
        err = bad_request("input item type '" + (type.empty() ? std::string("(none)") : type) +
                              "' is not supported by this server",
                          p, "unsupported_value");
        return false;
    }
};

}  // namespace

bool parse_responses_input(const json &j, std::vector<chat_message> &msgs, std::string &system,
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
    if (!in.is_array()) {
        err = bad_request("'input' must be a string or an array of items", "input", "invalid_type");
        return false;
    }
    input_reader r{msgs, system, {}, {}};
    for (size_t i = 0; i < in.size(); ++i) {
        if (!r.item(in[i], "input[" + std::to_string(i) + "]", err)) return false;
    }
    // Nothing to answer (an empty probe, or only instructions): one empty user turn.
    if (msgs.empty()) msgs.push_back({"user", "", "", "", "", {}});
    return true;
}

}  // namespace sf
