#include "api/openai/openai_request.h"

#include "api/common/json_fields.h"
#include "api/common/media_refusal.h"
#include "api/common/priority.h"
#include "api/openai/openai_chat_options.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>

namespace sf {

using json = nlohmann::json;

namespace {

// Parses the body as a JSON object, its depth bounded (fields::parse_object).
bool parse_object(const std::string &body, json &j, api_error &err) {
    return fields::parse_object(body, j, err);
}

bool is_null_or_absent(const json &j, const char *key) {
    return !j.contains(key) || j[key].is_null();
}

// Reads an optional number field within [lo, hi].
bool opt_number(const json &j, const char *key, double lo, double hi, float &out, api_error &err) {
    if (is_null_or_absent(j, key)) return true;
    const auto &v = j[key];
    if (!v.is_number()) {
        err = bad_request(std::string("'") + key + "' must be a number", key, "invalid_type");
        return false;
    }
    double d = v.get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
        err = bad_request(std::string("'") + key + "' must be between " + json(lo).dump() +
                              " and " + json(hi).dump(),
                          key, "invalid_value");
        return false;
    }
    out = static_cast<float>(d);
    return true;
}

// Reads an optional integer field within [lo, hi].
bool opt_int(const json &j, const char *key, int64_t lo, int64_t hi, int64_t &out, bool &present,
             api_error &err) {
    present = false;
    if (is_null_or_absent(j, key)) return true;
    const auto &v = j[key];
    if (!v.is_number_integer() &&
        !(v.is_number_float() && std::floor(v.get<double>()) == v.get<double>())) {
        err = bad_request(std::string("'") + key + "' must be an integer", key, "invalid_type");
        return false;
    }
    double d = v.get<double>();
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
        err = bad_request(std::string("'") + key + "' must be an integer from " +
                              std::to_string(lo) + " to " + std::to_string(hi),
                          key, "invalid_value");
        return false;
    }
    out     = static_cast<int64_t>(d);
    present = true;
    return true;
}

bool opt_bool(const json &j, const char *key, bool &out, api_error &err) {
    if (is_null_or_absent(j, key)) return true;
    if (!j[key].is_boolean()) {
        err = bad_request(std::string("'") + key + "' must be a boolean", key, "invalid_type");
        return false;
    }
    out = j[key].get<bool>();
    return true;
}

// Body fields that pick a priority class (api/common/priority.h: `priority`, then `service_tier`).
bool parse_body_priority(const json &j, generate_request &out, api_error &err) {
    if (!is_null_or_absent(j, "priority")) {
        const auto &p = j["priority"];
        if (p.is_string()) {
            out.cls_from_body = parse_class_name(p.get<std::string>());
        } else if (p.is_number_integer()) {
            // vLLM's convention: lower is more urgent.
            int64_t v         = p.get<int64_t>();
            out.cls_from_body = v < 0    ? priority_class::INTERACTIVE
                                : v == 0 ? priority_class::NORMAL
                                         : priority_class::BATCH;
        }
        if (!out.cls_from_body) {
            err = bad_request(
                "'priority' must be interactive, normal, batch, or an integer (lower is more "
                "urgent)",
                "priority", "invalid_value");
            return false;
        }
        return true;
    }
    if (j.contains("service_tier") && j["service_tier"].is_string()) {
        const auto tier = j["service_tier"].get<std::string>();
        if (tier == "priority") out.cls_from_body = priority_class::INTERACTIVE;
        if (tier == "flex") out.cls_from_body = priority_class::BATCH;
    }
    return true;
}

// Sampling and stream fields shared by chat and text completions.
bool parse_common(const json &j, generate_request &out, openai_options &opts,
                  int32_t default_max_tokens, api_error &err) {
    if (!is_null_or_absent(j, "model")) {
        if (!j["model"].is_string()) {
            err = bad_request("'model' must be a string", "model", "invalid_type");
            return false;
        }
        out.model = j["model"].get<std::string>();
    }
    auto &s       = out.sampling;
    s.temperature = 1.0f;  // OpenAI's documented default
    s.top_p       = 1.0f;
    s.top_k       = 0;
    s.min_p       = 0.0f;
    if (!opt_number(j, "temperature", 0, 2, s.temperature, err)) return false;
    if (!opt_number(j, "top_p", 0, 1, s.top_p, err)) return false;
    if (!opt_number(j, "min_p", 0, 1, s.min_p, err)) return false;
    if (!opt_number(j, "presence_penalty", -2, 2, s.presence_penalty, err)) return false;
    if (!opt_number(j, "frequency_penalty", -2, 2, s.frequency_penalty, err)) return false;
    if (!opt_number(j, "repeat_penalty", 0, 10, s.repeat_penalty, err)) return false;
    int64_t v    = 0;
    bool present = false;
    if (!opt_int(j, "top_k", 0, INT32_MAX, v, present, err)) return false;
    if (present) s.top_k = static_cast<int32_t>(v);
    // OpenAI seeds are int64; any 64-bit integer is taken (its bits seed the sampler).
    if (!is_null_or_absent(j, "seed")) {
        const auto &sd = j["seed"];
        if (sd.is_number_unsigned()) {
            s.seed = sd.get<uint64_t>();
        } else if (sd.is_number_integer()) {
            s.seed = static_cast<uint64_t>(sd.get<int64_t>());
        } else {
            err = bad_request("'seed' must be an integer", "seed", "invalid_type");
            return false;
        }
        out.has_seed = true;
    }

    // llama-server's extension: keep generating past end-of-generation tokens.
    if (!opt_bool(j, "ignore_eos", s.ignore_eos, err)) return false;
    // Ours: "speculative": false opts the request out of speculative drafts (--spec-type).
    if (!opt_bool(j, "speculative", s.speculative, err)) return false;
    if (!parse_body_priority(j, out, err)) return false;
    if (!fields::cache_salt(j, out.cache_salt, err)) return false;

    // max_completion_tokens is current, max_tokens its deprecated alias (both honoured).
    s.max_tokens = default_max_tokens;
    if (!opt_int(j, "max_tokens", 1, INT32_MAX, v, present, err)) return false;
    if (present) s.max_tokens = static_cast<int32_t>(v);
    if (!opt_int(j, "max_completion_tokens", 1, INT32_MAX, v, present, err)) return false;
    if (present) s.max_tokens = static_cast<int32_t>(v);

    if (!opt_int(j, "n", 1, INT32_MAX, v, present, err)) return false;
    if (present && v != 1) {
        err = bad_request("'n' > 1 is not supported: this server returns one choice per request",
                          "n", "unsupported_value");
        return false;
    }
    if (!is_null_or_absent(j, "stop")) {
        const auto &st = j["stop"];
        if (st.is_string()) {
            s.stop.push_back(st.get<std::string>());
        } else if (st.is_array() && st.size() <= 16) {
            for (const auto &x : st) {
                if (!x.is_string()) {
                    err = bad_request("'stop' must be a string or an array of strings", "stop",
                                      "invalid_type");
                    return false;
                }
                s.stop.push_back(x.get<std::string>());
            }
        } else {
            err = bad_request("'stop' must be a string or an array of at most 16 strings", "stop",
                              "invalid_type");
            return false;
        }
    }
    if (!opt_bool(j, "stream", opts.stream, err)) return false;
    if (!is_null_or_absent(j, "stream_options")) {
        const auto &so = j["stream_options"];
        if (!so.is_object()) {
            err =
                bad_request("'stream_options' must be an object", "stream_options", "invalid_type");
            return false;
        }
        if (!opt_bool(so, "include_usage", opts.include_usage, err)) {
            err.param = "stream_options.include_usage";
            return false;
        }
    }
    bool logprobs = false;
    if (!opt_bool(j, "logprobs", logprobs, err)) return false;
    if (logprobs || (!is_null_or_absent(j, "top_logprobs") && !j["logprobs"].is_boolean())) {
        err = bad_request("'logprobs' is not supported by this server", "logprobs",
                          "unsupported_parameter");
        return false;
    }
    return true;
}

// An image_url part's inline image (image_url.url, or image_url itself as a string): valid
// base64 of an image within the size limit, else a 400 naming it (media_refusal.h).
bool check_image_url(const json &part, const std::string &param, size_t k, api_error &err) {
    if (!part.contains("image_url")) return true;
    const json *url = &part["image_url"];
    if (url->is_object() && url->contains("url")) url = &(*url)["url"];
    const std::string where = param + "[" + std::to_string(k) + "].image_url";
    return !url->is_string() || check_inline_image(url->get_ref<const std::string &>(), true,
                                                   where + ".url", param, err);
}

// The text of a message's content: a string, null, or an array of text parts (joined).
bool content_text(const json &c, size_t idx, std::string &out, api_error &err) {
    const std::string param = "messages[" + std::to_string(idx) + "].content";
    if (c.is_null()) return true;
    if (c.is_string()) {
        out = c.get<std::string>();
        return true;
    }
    if (!c.is_array()) {
        err = bad_request("message content must be a string or an array of content parts", param,
                          "invalid_type");
        return false;
    }
    for (size_t k = 0; k < c.size(); ++k) {
        const json &part = c[k];
        if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
            err = bad_request("each content part must be an object with a 'type'", param,
                              "invalid_type");
            return false;
        }
        const std::string type = part["type"].get<std::string>();
        if (type == "text" || type == "input_text") {
            if (!part.contains("text") || !part["text"].is_string()) {
                err =
                    bad_request("a text content part needs a string 'text'", param, "invalid_type");
                return false;
            }
            if (!out.empty()) out += "\n";
            out += part["text"].get<std::string>();
        } else if (type == "image_url" || type == "input_image" || type == "input_audio" ||
                   type == "file") {
            if (type == "image_url" && !check_image_url(part, param, k, err)) return false;
            err = media_refusal(type, param);
            return false;
        } else {
            err = bad_request("unknown content part type '" + type + "'", param, "invalid_value");
            return false;
        }
    }
    return true;
}

bool parse_messages(const json &j, std::vector<chat_message> &out, api_error &err) {
    if (!j.contains("messages")) {
        err = bad_request("'messages' is required", "messages", "missing_required_parameter");
        return false;
    }
    const auto &msgs = j["messages"];
    if (!msgs.is_array() || msgs.empty()) {
        err = bad_request("'messages' must be a non-empty array", "messages", "invalid_type");
        return false;
    }
    std::string system;  // system + developer messages, merged into one leading system turn
    for (size_t i = 0; i < msgs.size(); ++i) {
        const auto &m       = msgs[i];
        const std::string p = "messages[" + std::to_string(i) + "]";
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
            err = bad_request("each message must be an object with a string 'role'", p + ".role",
                              "invalid_type");
            return false;
        }
        chat_message cm;
        cm.role = m["role"].get<std::string>();
        if (cm.role != "system" && cm.role != "developer" && cm.role != "user" &&
            cm.role != "assistant" && cm.role != "tool") {
            err = bad_request("unknown role '" + cm.role +
                                  "' (expected system, developer, user, assistant or tool)",
                              p + ".role", "invalid_value");
            return false;
        }
        if (!m.contains("content") && cm.role != "assistant") {
            err = bad_request("message content is required", p + ".content",
                              "missing_required_parameter");
            return false;
        }
        if (m.contains("content") && !content_text(m["content"], i, cm.content, err)) return false;
        if (m.contains("name") && m["name"].is_string()) cm.name = m["name"].get<std::string>();
        if (cm.role == "tool") {
            if (!m.contains("tool_call_id") || !m["tool_call_id"].is_string()) {
                err = bad_request("a tool message needs a string 'tool_call_id'",
                                  p + ".tool_call_id", "missing_required_parameter");
                return false;
            }
            cm.tool_call_id = m["tool_call_id"].get<std::string>();
        }
        if (cm.role == "assistant" && m.contains("tool_calls") && !m["tool_calls"].is_null()) {
            if (!m["tool_calls"].is_array()) {
                err =
                    bad_request("'tool_calls' must be an array", p + ".tool_calls", "invalid_type");
                return false;
            }
            for (const auto &tc : m["tool_calls"]) {
                if (!tc.is_object() || !tc.contains("function") || !tc["function"].is_object() ||
                    !tc["function"].contains("name") || !tc["function"]["name"].is_string()) {
                    err = bad_request("each tool call needs a function with a string name",
                                      p + ".tool_calls", "invalid_type");
                    return false;
                }
                const json &id = tc.contains("id") ? tc["id"] : json();
                const json &args =
                    tc["function"].contains("arguments") ? tc["function"]["arguments"] : json();
                if ((!id.is_null() && !id.is_string()) ||
                    (!args.is_null() && !args.is_string() && !args.is_object())) {
                    err = bad_request("a tool call's 'id' and 'function.arguments' must be strings",
                                      p + ".tool_calls", "invalid_type");
                    return false;
                }
                tool_call call;
                call.id        = id.is_string() ? id.get<std::string>() : "";
                call.name      = tc["function"]["name"].get<std::string>();
                call.arguments = args.is_string() ? args.get<std::string>()
                                 : args.is_null() ? "{}"
                                                  : args.dump();
                cm.tool_calls.push_back(std::move(call));
            }
        }
        if (m.contains("reasoning_content") && m["reasoning_content"].is_string()) {
            cm.reasoning_content = m["reasoning_content"].get<std::string>();
        }
        // `developer` replaces `system` for newer models; templates know only `system`, and many
        // require it first, so all of them become one leading system message.
        if (cm.role == "system" || cm.role == "developer") {
            if (!system.empty()) system += "\n\n";
            system += cm.content;
            continue;
        }
        out.push_back(std::move(cm));
    }
    if (!system.empty() || out.empty()) {
        out.insert(out.begin(), chat_message{"system", system, "", "", "", {}});
    }
    return true;
}

}  // namespace

bool parse_openai_chat(const std::string &body, generate_request &out, openai_options &opts,
                       api_error &err) {
    json j;
    if (!parse_object(body, j, err)) return false;
    out.is_chat = true;
    // No max: generation runs to the context limit, like OpenAI and llama-server.
    if (!parse_common(j, out, opts, INT32_MAX, err)) return false;
    if (!parse_messages(j, out.messages, err)) return false;
    return parse_openai_chat_options(j, out.chat, err);
}

bool parse_openai_completion(const std::string &body, generate_request &out, openai_options &opts,
                             api_error &err) {
    json j;
    if (!parse_object(body, j, err)) return false;
    out.is_chat = false;
    // The legacy completions API defaults max_tokens to 16.
    if (!parse_common(j, out, opts, 16, err)) return false;
    if (!j.contains("prompt")) {
        err = bad_request("'prompt' is required", "prompt", "missing_required_parameter");
        return false;
    }
    const auto &p = j["prompt"];
    if (p.is_string()) {
        out.prompt = p.get<std::string>();
    } else if (p.is_array() && p.size() == 1 && p[0].is_string()) {
        out.prompt = p[0].get<std::string>();
    } else {
        err = bad_request("'prompt' must be a string (one prompt per request)", "prompt",
                          "invalid_type");
        return false;
    }
    if (out.prompt.empty()) {
        err = bad_request("'prompt' must not be empty", "prompt", "invalid_value");
        return false;
    }
    bool echo = false;
    if (!opt_bool(j, "echo", echo, err)) return false;
    if (echo) {
        err =
            bad_request("'echo' is not supported by this server", "echo", "unsupported_parameter");
        return false;
    }
    if (j.contains("suffix") && j["suffix"].is_string() &&
        !j["suffix"].get<std::string>().empty()) {
        err = bad_request("'suffix' is not supported by this server", "suffix",
                          "unsupported_parameter");
        return false;
    }
    return true;
}

}  // namespace sf
