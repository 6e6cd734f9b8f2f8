#include "api/anthropic/anthropic_request.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>

#include "api/common/json_fields.h"
#include "api/common/media_refusal.h"
#include "api/openai/openai_chat_options.h"

namespace sf {

using json = nlohmann::json;

namespace {

bool present(const json &j, const char *key) {
    return j.contains(key) && !j[key].is_null();
}

// Text of a block list (system, tool_result content): text blocks joined; images cannot be
// seen by a text-only model, so inside a tool result they become a note instead of a failure.
bool blocks_text(const json &c, const std::string &param, bool images_as_note, std::string &out,
                 api_error &err) {
    if (c.is_null()) return true;
    if (c.is_string()) {
        out = c.get<std::string>();
        return true;
    }
    if (!c.is_array()) {
        err = bad_request(param + ": must be a string or an array of content blocks", param);
        return false;
    }
    for (const auto &b : c) {
        const std::string type = b.is_object() && b.contains("type") && b["type"].is_string()
                                     ? b["type"].get<std::string>()
                                     : "";
        if (type == "text" && b.contains("text") && b["text"].is_string()) {
            if (!out.empty()) out += "\n";
            out += b["text"].get<std::string>();
        } else if ((type == "image" || type == "document") && images_as_note) {
            if (!out.empty()) out += "\n";
            out += "[" + type + " omitted: the model has no vision support]";
        } else if (type == "image" || type == "document") {
            err = media_refusal(type, param);
            return false;
        } else {
            err = bad_request(param + ": expected text blocks, got '" + type + "'", param);
            return false;
        }
    }
    return true;
}

// An image block's base64 source (source.data): an image within the size limit, else a 400
// naming it (media_refusal.h). URL sources pass here.
bool check_image_source(const json &b, const std::string &bp, api_error &err) {
    if (!b.contains("source") || !b["source"].is_object()) return true;
    const json &src = b["source"];
    if (!src.contains("type") || src["type"] != "base64" || !src.contains("data") ||
        !src["data"].is_string())
        return true;
    return check_inline_image(src["data"].get_ref<const std::string &>(), false,
                              bp + ".source.data", bp, err);
}

// One message's blocks, appended as chat messages: a user turn's tool_result blocks become
// `tool` messages (in order, text around them becomes user messages); an assistant turn's
// thinking becomes reasoning_content and its tool_use blocks tool_calls.
bool parse_message(const json &m, size_t i, std::vector<chat_message> &out, api_error &err) {
    const std::string p = "messages." + std::to_string(i);
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
        err = bad_request(p + ".role: Field required", p + ".role");
        return false;
    }
    const std::string role = m["role"].get<std::string>();
    // Claude Code also sends {"role": "system"} turns inside `messages`; they join the system
    // prompt (templates want one system turn, first).
    if (role != "user" && role != "assistant" && role != "system") {
        err = bad_request(p + ".role: must be 'user' or 'assistant'", p + ".role");
        return false;
    }
    if (!m.contains("content")) {
        err = bad_request(p + ".content: Field required", p + ".content");
        return false;
    }
    const json &c = m["content"];
    if (c.is_string()) {
        out.push_back({role, c.get<std::string>(), "", "", "", {}});
        return true;
    }
    if (!c.is_array()) {
        err = bad_request(p + ".content: must be a string or an array of content blocks",
                          p + ".content");
        return false;
    }
    chat_message cur{role, "", "", "", "", {}};
    bool has_cur = false;
    auto flush   = [&] {
        if (has_cur) out.push_back(cur);
        cur     = chat_message{role, "", "", "", "", {}};
        has_cur = false;
    };
    for (size_t k = 0; k < c.size(); ++k) {
        const auto &b          = c[k];
        const std::string bp   = p + ".content." + std::to_string(k);
        const std::string type = b.is_object() && b.contains("type") && b["type"].is_string()
                                     ? b["type"].get<std::string>()
                                     : "";
        if (type == "text") {
            if (!b.contains("text") || !b["text"].is_string()) {
                err = bad_request(bp + ".text: Field required", bp + ".text");
                return false;
            }
            if (!cur.content.empty()) cur.content += "\n";
            cur.content += b["text"].get<std::string>();
            has_cur = true;
        } else if (type == "thinking" && role == "assistant") {
            if (b.contains("thinking") && b["thinking"].is_string()) {
                cur.reasoning_content += b["thinking"].get<std::string>();
                has_cur = true;
            }
        } else if (type == "redacted_thinking") {
            // Encrypted reasoning of another model: nothing a local template can show.
        } else if (type == "tool_use" && role == "assistant") {
            if (!b.contains("name") || !b["name"].is_string()) {
                err = bad_request(bp + ".name: Field required", bp + ".name");
                return false;
            }
            const json input = b.contains("input") ? b["input"] : json::object();
            cur.tool_calls.push_back(
                {b.contains("id") && b["id"].is_string() ? b["id"].get<std::string>() : "",
                 b["name"].get<std::string>(), input.dump()});
            has_cur = true;
        } else if (type == "tool_result" && role == "user") {
            flush();
            chat_message tm{"tool", "", "", "", "", {}};
            if (!b.contains("tool_use_id") || !b["tool_use_id"].is_string()) {
                err = bad_request(bp + ".tool_use_id: Field required", bp + ".tool_use_id");
                return false;
            }
            tm.tool_call_id = b["tool_use_id"].get<std::string>();
            if (b.contains("content") &&
                !blocks_text(b["content"], bp + ".content", true, tm.content, err))
                return false;
            if (b.contains("is_error") && b["is_error"] == true)
                tm.content = "Error: " + tm.content;
            out.push_back(std::move(tm));
        } else if (type == "image" || type == "document") {
            if (type == "image" && !check_image_source(b, bp, err)) return false;
            err = media_refusal(type, bp);
            return false;
        } else {
            err = bad_request(bp + ".type: unsupported content block type '" + type + "' in a " +
                                  role + " message",
                              bp + ".type");
            return false;
        }
    }
    flush();
    return true;
}

bool parse_tools(const json &j, chat_options &out, api_error &err) {
    if (!present(j, "tools")) return true;
    if (!j["tools"].is_array()) {
        err = bad_request("tools: must be an array", "tools");
        return false;
    }
    for (size_t i = 0; i < j["tools"].size(); ++i) {
        const auto &t       = j["tools"][i];
        const std::string p = "tools." + std::to_string(i);
        if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) {
            err = bad_request(p + ".name: Field required", p + ".name");
            return false;
        }
        if (t.contains("type") && t["type"].is_string() && t["type"] != "custom") {
            err = bad_request(p + ": server tool '" + t["type"].get<std::string>() +
                                  "' is not available on this server (only custom tools)",
                              p + ".type");
            return false;
        }
        tool_spec spec;
        spec.name = t["name"].get<std::string>();
        if (t.contains("description") && t["description"].is_string())
            spec.description = t["description"].get<std::string>();
        if (!tool_parameters_text(t.contains("input_schema") ? t["input_schema"] : json(),
                                  p + ".input_schema", spec.parameters, err))
            return false;
        out.tools.push_back(std::move(spec));
    }
    return true;
}

bool parse_tool_choice(const json &j, chat_options &out, api_error &err) {
    if (!present(j, "tool_choice")) return true;
    const auto &tc         = j["tool_choice"];
    const std::string type = tc.is_object() && tc.contains("type") && tc["type"].is_string()
                                 ? tc["type"].get<std::string>()
                                 : "";
    if (type == "auto") {
        out.tool_choice = tool_choice_mode::AUTO;
    } else if (type == "any") {
        out.tool_choice = tool_choice_mode::REQUIRED;
    } else if (type == "none") {
        out.tool_choice = tool_choice_mode::NONE;
    } else if (type == "tool" && tc.contains("name") && tc["name"].is_string()) {
        out.tool_choice = tool_choice_mode::NAMED;
        out.tool_name   = tc["name"].get<std::string>();
        bool found      = false;
        for (const auto &t : out.tools) found = found || t.name == out.tool_name;
        if (!found) {
            err =
                bad_request("tool_choice.name: tool '" + out.tool_name + "' is not among the tools",
                            "tool_choice.name");
            return false;
        }
    } else {
        err = bad_request(
            "tool_choice: must be {\"type\": \"auto\" | \"any\" | \"none\"} or "
            "{\"type\": \"tool\", \"name\": …}",
            "tool_choice");
        return false;
    }
    if ((type == "any" || type == "tool") && out.tools.empty()) {
        err = bad_request("tool_choice: forces tool use but no tools were given", "tool_choice");
        return false;
    }
    if (tc.contains("disable_parallel_tool_use") && tc["disable_parallel_tool_use"] == true)
        out.parallel_tool_calls = false;
    return true;
}

bool parse_thinking(const json &j, chat_options &out, api_error &err) {
    out.reasoning = 0;  // Anthropic: no extended thinking unless asked for
    if (!present(j, "thinking")) return true;
    const auto &t          = j["thinking"];
    const std::string type = t.is_object() && t.contains("type") && t["type"].is_string()
                                 ? t["type"].get<std::string>()
                                 : "";
    if (type == "disabled") return true;
    if (type != "enabled" && type != "adaptive") {
        err = bad_request("thinking.type: must be 'enabled' or 'disabled'", "thinking.type");
        return false;
    }
    out.reasoning = 1;
    if (t.contains("budget_tokens")) {
        if (!t["budget_tokens"].is_number_integer() || t["budget_tokens"].get<int64_t>() < 1) {
            err = bad_request("thinking.budget_tokens: must be a positive integer",
                              "thinking.budget_tokens");
            return false;
        }
        out.reasoning_budget =
            static_cast<int32_t>(std::min<int64_t>(t["budget_tokens"].get<int64_t>(), INT32_MAX));
    }
    if (out.tool_choice == tool_choice_mode::REQUIRED ||
        out.tool_choice == tool_choice_mode::NAMED) {
        err = bad_request("Thinking may not be enabled when tool_choice forces tool use.",
                          "thinking");
        return false;
    }
    return true;
}

bool parse_sampling(const json &j, bool count_only, generate_request &out, anthropic_options &opts,
                    api_error &err) {
    auto &s       = out.sampling;
    s.temperature = 1.0f;  // Anthropic's default
    s.top_p       = 1.0f;
    s.top_k       = 0;
    s.min_p       = 0.0f;
    if (present(j, "max_tokens")) {
        const auto &v = j["max_tokens"];
        if (!v.is_number_integer() || v.get<int64_t>() < 1) {
            err = bad_request("max_tokens: must be an integer >= 1", "max_tokens");
            return false;
        }
        s.max_tokens = static_cast<int32_t>(std::min<int64_t>(v.get<int64_t>(), INT32_MAX));
    } else if (!count_only) {
        err = bad_request("max_tokens: Field required", "max_tokens");
        return false;
    }
    struct range {
        const char *key;
        double lo, hi;
        float *dst;
    };
    for (const range &r :
         {range{"temperature", 0, 1, &s.temperature}, range{"top_p", 0, 1, &s.top_p}}) {
        if (!present(j, r.key)) continue;
        if (!j[r.key].is_number() || j[r.key].get<double>() < r.lo ||
            j[r.key].get<double>() > r.hi) {
            err = bad_request(std::string(r.key) + ": must be a number from 0 to 1", r.key);
            return false;
        }
        *r.dst = j[r.key].get<float>();
    }
    if (present(j, "top_k")) {
        if (!j["top_k"].is_number_integer() || j["top_k"].get<int64_t>() < 0) {
            err = bad_request("top_k: must be a non-negative integer", "top_k");
            return false;
        }
        s.top_k = static_cast<int32_t>(std::min<int64_t>(j["top_k"].get<int64_t>(), INT32_MAX));
    }
    if (present(j, "stop_sequences")) {
        if (!j["stop_sequences"].is_array()) {
            err = bad_request("stop_sequences: must be an array of strings", "stop_sequences");
            return false;
        }
        for (const auto &x : j["stop_sequences"]) {
            if (!x.is_string() || x.get<std::string>().empty()) {
                err = bad_request("stop_sequences: must be non-empty strings", "stop_sequences");
                return false;
            }
            s.stop.push_back(x.get<std::string>());
        }
        opts.stop_sequences = s.stop;
    }
    if (present(j, "stream")) {
        if (!j["stream"].is_boolean()) {
            err = bad_request("stream: must be a boolean", "stream");
            return false;
        }
        opts.stream = j["stream"].get<bool>();
    }
    if (present(j, "metadata") && !j["metadata"].is_object()) {
        err = bad_request("metadata: must be an object", "metadata");
        return false;
    }
    return true;
}

}  // namespace

bool parse_anthropic_messages(const std::string &body, bool count_only, generate_request &out,
                              anthropic_options &opts, api_error &err) {
    json j;
    if (!fields::parse_object(body, j, err)) return false;
    out.is_chat = true;
    if (present(j, "model")) {
        if (!j["model"].is_string()) {
            err = bad_request("model: must be a string", "model");
            return false;
        }
        out.model = j["model"].get<std::string>();
    }
    if (!parse_sampling(j, count_only, out, opts, err)) return false;
    if (!fields::cache_salt(j, out.cache_salt, err)) return false;  // ours, as vLLM's
    std::string system;
    if (present(j, "system") && !blocks_text(j["system"], "system", false, system, err))
        return false;
    if (!j.contains("messages") || !j["messages"].is_array()) {
        err = bad_request("messages: Field required (an array)", "messages");
        return false;
    }
    for (size_t i = 0; i < j["messages"].size(); ++i) {
        const auto &m = j["messages"][i];
        if (fields::text_or(m, "role") == "system" && m.contains("content")) {
            std::string text;
            if (!blocks_text(m["content"], "messages." + std::to_string(i) + ".content", false,
                             text, err))
                return false;
            system += (system.empty() ? "" : "\n\n") + text;
            continue;
        }
        if (!parse_message(m, i, out.messages, err)) return false;
    }
    if (!system.empty())
        out.messages.insert(out.messages.begin(), {"system", system, "", "", "", {}});
    if (out.messages.empty() || (out.messages.size() == 1 && !system.empty())) {
        err = bad_request("messages: at least one message is required", "messages");
        return false;
    }
    if (!parse_tools(j, out.chat, err) || !parse_tool_choice(j, out.chat, err) ||
        !parse_thinking(j, out.chat, err))
        return false;
    // Structured outputs (beta): {"output_format": {"type": "json_schema", "schema": {…}}}.
    if (present(j, "output_format")) {
        if (!j["output_format"].is_object()) {
            err = bad_request("output_format: must be an object", "output_format");
            return false;
        }
        json rf = {{"response_format",
                    {{"type", "json_schema"},
                     {"json_schema", {{"schema", j["output_format"].value("schema", json())}}}}}};
        if (!parse_openai_chat_options(rf, out.chat, err)) {
            err.param = "output_format.schema";
            return false;
        }
    }
    return true;
}

}  // namespace sf
