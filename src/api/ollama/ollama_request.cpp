#include "api/ollama/ollama_request.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <climits>
#include <cmath>

#include "api/common/json_fields.h"
#include "api/common/media_refusal.h"
#include "api/ollama/ollama_template.h"
#include "util/go_duration.h"

namespace sf {

using json = nlohmann::json;

namespace {

bool parse_keep_alive(const json &j, generate_request &out, ollama_options &opts, api_error &err) {
    if (fields::absent(j, "keep_alive")) return true;
    const json &k  = j["keep_alive"];
    double seconds = 0;
    if (k.is_number()) {
        seconds = k.get<double>();
    } else if (!k.is_string() || !parse_go_duration(k.get<std::string>(), seconds)) {
        err = bad_request("'keep_alive' must be a number of seconds or a duration like \"5m\"",
                          "keep_alive", "invalid_value");
        return false;
    }
    opts.unload = seconds == 0;
    // Negative: kept loaded for good (Ollama's -1); beyond ~292 years is forever too.
    out.keep_alive_ms = seconds < 0 || seconds > 9e15 ? -1 : static_cast<int64_t>(seconds * 1000);
    return true;
}

// Ollama's `options` object. Unknown keys are ignored (Ollama does the same); known keys are
// type-checked. Defaults are Ollama's (api/types.go DefaultOptions).
bool parse_options(const json &j, generate_request &out, ollama_options &opts, api_error &err) {
    auto &s          = out.sampling;
    s.temperature    = 0.8f;
    s.top_k          = 40;
    s.top_p          = 0.9f;
    s.min_p          = 0.0f;
    s.repeat_penalty = 1.1f;
    s.repeat_last_n  = 64;
    s.max_tokens     = INT32_MAX;  // num_predict -1: until the model stops or the context fills
    if (fields::absent(j, "options")) return true;
    const json &o = j["options"];
    if (!o.is_object()) {
        err = bad_request("'options' must be an object", "options", "invalid_type");
        return false;
    }
    const std::string p = "options.";
    int64_t v           = 0;
    bool present        = false;
    if (!fields::number(o, "temperature", 0, 100, s.temperature, err, p) ||
        !fields::number(o, "top_p", 0, 1, s.top_p, err, p) ||
        !fields::number(o, "min_p", 0, 1, s.min_p, err, p) ||
        !fields::number(o, "repeat_penalty", 0, 100, s.repeat_penalty, err, p) ||
        !fields::number(o, "presence_penalty", -100, 100, s.presence_penalty, err, p) ||
        !fields::number(o, "frequency_penalty", -100, 100, s.frequency_penalty, err, p))
        return false;
    if (!fields::integer(o, "top_k", INT32_MIN, INT32_MAX, v, present, err, p)) return false;
    if (present) s.top_k = v > 0 ? static_cast<int32_t>(v) : 0;
    if (!fields::integer(o, "repeat_last_n", -1, INT32_MAX, v, present, err, p)) return false;
    if (present) s.repeat_last_n = static_cast<int32_t>(v);
    // num_predict: -1 no limit, -2 fill the context (both: the context limit ends it).
    if (!fields::integer(o, "num_predict", -2, INT32_MAX, v, present, err, p)) return false;
    if (present && v != 0) s.max_tokens = v < 0 ? INT32_MAX : static_cast<int32_t>(v);
    if (!fields::integer(o, "num_ctx", INT32_MIN, INT32_MAX, v, present, err, p)) return false;
    if (present && v > 0) opts.num_ctx = static_cast<int32_t>(v);
    // A negative seed is Ollama's "random".
    if (!fields::integer(o, "seed", INT64_MIN, INT64_MAX, v, present, err, p)) return false;
    if (present && v >= 0) {
        s.seed       = static_cast<uint64_t>(v);
        out.has_seed = true;
    }
    return fields::strings(o, "stop", s.stop, err, p);
}

// Fields /api/chat and /api/generate share: model, stream, keep_alive, options, format, think.
bool parse_common(const json &j, generate_request &out, ollama_options &opts, api_error &err) {
    if (!fields::string(j, "model", out.model, err)) return false;
    if (out.model.empty()) {
        err = bad_request("model is required", "model", "missing_required_parameter");
        return false;
    }
    if (!fields::boolean(j, "stream", opts.stream, err)) return false;
    if (!parse_keep_alive(j, out, opts, err)) return false;
    if (!parse_options(j, out, opts, err)) return false;
    if (!fields::cache_salt(j, out.cache_salt, err)) return false;  // ours, as vLLM's
    chat_options &chat = out.chat;
    if (!fields::absent(j, "format")) {
        // "json": any JSON object (Ollama's JSON mode); an object: a JSON schema to follow.
        const json &f = j["format"];
        if (f.is_string() && f == "json") {
            chat.json_schema = R"({"type":"object"})";
        } else if (f.is_object()) {
            if (!fields::enforceable_schema(f, true, "format", err)) return false;
            chat.json_schema = f.dump();
        } else if (!(f.is_string() && f == "")) {
            err = bad_request("'format' must be \"json\" or a JSON schema object", "format",
                              "invalid_value");
            return false;
        }
    }
    if (!fields::absent(j, "think")) {
        const json &t = j["think"];
        if (t.is_boolean()) {
            chat.reasoning = t.get<bool>() ? 1 : 0;
        } else if (t.is_string() && (t == "high" || t == "medium" || t == "low")) {
            chat.reasoning        = 1;
            chat.reasoning_effort = t.get<std::string>();  // gpt-oss style levels
        } else {
            err = bad_request("'think' must be true, false, \"high\", \"medium\" or \"low\"",
                              "think", "invalid_value");
            return false;
        }
    }
    return true;
}

// Ollama's tools: [{"type":"function","function":{"name","description","parameters"}}].
bool parse_tools(const json &j, chat_options &chat, api_error &err) {
    if (fields::absent(j, "tools")) return true;
    if (!j["tools"].is_array()) {
        err = bad_request("'tools' must be an array", "tools", "invalid_type");
        return false;
    }
    for (size_t i = 0; i < j["tools"].size(); ++i) {
        const json &t       = j["tools"][i];
        const std::string p = "tools[" + std::to_string(i) + "]";
        const json *fn      = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
        tool_spec spec;
        if (!fn || !fn->is_object()) {
            err = bad_request("each tool needs a 'function' object", p, "invalid_type");
            return false;
        }
        if (!fields::string(*fn, "name", spec.name, err, p + ".function.")) return false;
        if (spec.name.empty()) {
            err = bad_request("each tool needs a function name", p + ".function.name",
                              "missing_required_parameter");
            return false;
        }
        if (!fields::string(*fn, "description", spec.description, err, p + ".function."))
            return false;
        const json params = fn->contains("parameters") && !(*fn)["parameters"].is_null()
                                ? (*fn)["parameters"]
                                : json{{"type", "object"}, {"properties", json::object()}};
        if (!params.is_object()) {
            err = bad_request("a tool's parameters must be a JSON schema object",
                              p + ".function.parameters", "invalid_type");
            return false;
        }
        if (!fields::enforceable_schema(params, false, p + ".function.parameters", err))
            return false;
        spec.parameters = params.dump();
        chat.tools.push_back(std::move(spec));
    }
    return true;
}

bool refuse_images(const json &obj, const std::string &path, api_error &err) {
    if (obj.contains("images") && obj["images"].is_array() && !obj["images"].empty()) {
        const json &images = obj["images"];
        for (size_t i = 0; i < images.size(); ++i) {
            const std::string at = path + "[" + std::to_string(i) + "]";
            if (images[i].is_string() &&
                !check_inline_image(images[i].get_ref<const std::string &>(), false, at, path, err))
                return false;
        }
        err = media_refusal("images", path);
        return false;
    }
    return true;
}

bool parse_tool_calls(const json &m, chat_message &cm, const std::string &path, api_error &err) {
    if (fields::absent(m, "tool_calls")) return true;
    if (!m["tool_calls"].is_array()) {
        err = bad_request("'tool_calls' must be an array", path, "invalid_type");
        return false;
    }
    for (const auto &tc : m["tool_calls"]) {
        const json *fn = tc.is_object() && tc.contains("function") ? &tc["function"] : nullptr;
        if (!fn || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
            err = bad_request("each tool call needs a function with a string name", path,
                              "invalid_type");
            return false;
        }
        tool_call call;
        call.name        = (*fn)["name"].get<std::string>();
        const json &args = fn->contains("arguments") ? (*fn)["arguments"] : json::object();
        // Ollama sends arguments as an object; a JSON string is taken too.
        call.arguments = args.is_string() ? args.get<std::string>()
                         : args.is_null() ? "{}"
                                          : args.dump();
        if (tc.contains("id") && tc["id"].is_string()) call.id = tc["id"].get<std::string>();
        cm.tool_calls.push_back(std::move(call));
    }
    return true;
}

bool parse_messages(const json &j, std::vector<chat_message> &out, api_error &err) {
    const json &msgs = j["messages"];
    for (size_t i = 0; i < msgs.size(); ++i) {
        const json &m       = msgs[i];
        const std::string p = "messages[" + std::to_string(i) + "]";
        chat_message cm;
        if (!m.is_object()) {
            err = bad_request("each message must be an object", p, "invalid_type");
            return false;
        }
        if (!fields::string(m, "role", cm.role, err, p + ".")) return false;
        if (cm.role != "system" && cm.role != "user" && cm.role != "assistant" &&
            cm.role != "tool") {
            err = bad_request(
                "unknown role '" + cm.role + "' (expected system, user, assistant or tool)",
                p + ".role", "invalid_value");
            return false;
        }
        if (!fields::string(m, "content", cm.content, err, p + ".") ||
            !fields::string(m, "thinking", cm.reasoning_content, err, p + ".") ||
            !fields::string(m, "tool_name", cm.name, err, p + ".") ||
            !refuse_images(m, p + ".images", err) ||
            !parse_tool_calls(m, cm, p + ".tool_calls", err))
            return false;
        if (cm.name.empty()) fields::string(m, "name", cm.name, err, p + ".");
        out.push_back(std::move(cm));
    }
    return true;
}

}  // namespace

bool parse_ollama_chat(const std::string &body, generate_request &out, ollama_options &opts,
                       api_error &err) {
    json j;
    if (!fields::parse_object(body, j, err) || !parse_common(j, out, opts, err)) return false;
    out.is_chat = true;
    if (!fields::absent(j, "messages") && !j["messages"].is_array()) {
        err = bad_request("'messages' must be an array", "messages", "invalid_type");
        return false;
    }
    if (fields::absent(j, "messages") || j["messages"].empty()) {
        opts.load_only = true;
        return true;
    }
    return parse_messages(j, out.messages, err) && parse_tools(j, out.chat, err);
}

bool parse_ollama_generate(const std::string &body, generate_request &out, ollama_options &opts,
                           api_error &err) {
    json j;
    if (!fields::parse_object(body, j, err) || !parse_common(j, out, opts, err)) return false;
    std::string prompt, system, tmpl, suffix;
    if (!fields::string(j, "prompt", prompt, err) || !fields::string(j, "system", system, err) ||
        !fields::string(j, "template", tmpl, err) || !fields::string(j, "suffix", suffix, err) ||
        !fields::boolean(j, "raw", opts.raw, err) || !refuse_images(j, "images", err))
        return false;
    if (!suffix.empty()) {
        err = bad_request("'suffix' (fill-in-the-middle) is not supported by this server", "suffix",
                          "unsupported_parameter");
        return false;
    }
    if (!fields::absent(j, "context")) {
        const json &c = j["context"];
        if (!c.is_array()) {
            err = bad_request("'context' must be an array of token ids", "context", "invalid_type");
            return false;
        }
        for (const auto &t : c) {
            if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX) {
                err = bad_request("'context' must be an array of token ids", "context",
                                  "invalid_type");
                return false;
            }
            out.prefix_tokens.push_back(static_cast<token_id>(t.get<int64_t>()));
        }
    }
    // Ollama answers a generate without a prompt as a load (or unload) request.
    if (prompt.empty()) {
        opts.load_only = true;
        return true;
    }
    out.want_prompt_tokens = true;  // the final line carries `context`
    const bool shaped      = !out.chat.json_schema.empty() || out.chat.reasoning == 1;
    if ((opts.raw || !tmpl.empty()) && shaped) {
        // Grammar and reasoning come from the model's chat template, which raw skips.
        err = bad_request(
            "'format' and 'think' need the model's template: not with 'raw' or "
            "'template'",
            opts.raw ? "raw" : "template", "unsupported_value");
        return false;
    }
    if (opts.raw) {
        out.is_chat = false;  // no template at all: the prompt is the model's input
        out.prompt  = prompt;
    } else if (!tmpl.empty()) {
        // A Go template from the request replaces the model's chat template.
        std::string rendered, terr;
        if (!render_ollama_template(tmpl, system, prompt, rendered, terr)) {
            err = bad_request(terr, "template", "unsupported_value");
            return false;
        }
        out.is_chat = false;
        out.prompt  = rendered;
    } else {
        out.is_chat = true;
        if (!system.empty()) out.messages.push_back({"system", system, "", "", "", {}});
        out.messages.push_back({"user", prompt, "", "", "", {}});
    }
    return true;
}

}  // namespace sf
