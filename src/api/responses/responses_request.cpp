#include "api/responses/responses_request.h"

#include <climits>

#include "api/common/json_fields.h"
#include "api/responses/responses_input.h"
#include "api/responses/responses_tools.h"

namespace sf {

using json = nlohmann::json;

namespace {

// text.format: text | json_object | json_schema {name, schema, strict}.
bool parse_text_format(const json &j, chat_options &chat, api_error &err) {
    if (fields::absent(j, "text") || !j["text"].is_object() || fields::absent(j["text"], "format"))
        return true;
    const json &f          = j["text"]["format"];
    const std::string type = fields::text_or(f, "type");
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

// Fields that change nothing here but are checked for their type, so a client learns of a
// typo: `include` (e.g. "reasoning.encrypted_content": this server's reasoning items carry no
// encrypted content), `truncation` ("auto" is accepted; a prompt over the context is still a
// 400), `prompt_cache_key` (the prefix cache needs no key), `service_tier`,
// `safety_identifier`, `user`, `metadata`.
bool accepted_fields(const json &j, api_error &err) {
    std::vector<std::string> include;
    std::string truncation, key, tier, safety, user;
    if (!fields::strings(j, "include", include, err) ||
        !fields::string(j, "truncation", truncation, err) ||
        !fields::string(j, "prompt_cache_key", key, err) ||
        !fields::string(j, "service_tier", tier, err) ||
        !fields::string(j, "safety_identifier", safety, err) ||
        !fields::string(j, "user", user, err))
        return false;
    if (!truncation.empty() && truncation != "auto" && truncation != "disabled") {
        err = bad_request("'truncation' must be auto or disabled", "truncation", "invalid_value");
        return false;
    }
    if (!fields::absent(j, "metadata") && !j["metadata"].is_object()) {
        err = bad_request("'metadata' must be an object", "metadata", "invalid_type");
        return false;
    }
    return true;
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

    if (!accepted_fields(j, err)) return false;
    if (!fields::cache_salt(j, out.cache_salt, err)) return false;  // ours, as vLLM's

    std::string system;
    if (!fields::string(j, "instructions", system, err)) return false;
    if (!parse_responses_input(j, out.messages, system, err) ||
        !parse_responses_tools(j, out.chat, opts.skipped_tools, err) ||
        !parse_responses_tool_choice(j, out.chat, err) || !parse_text_format(j, out.chat, err) ||
        !parse_reasoning(j, out.chat, err))
        return false;
    if (!system.empty())
        out.messages.insert(out.messages.begin(), {"system", system, "", "", "", {}});

    // Fields the response object repeats as the request set them.
    for (const char *k :
         {"instructions", "max_output_tokens", "max_tool_calls", "metadata", "parallel_tool_calls",
          "prompt_cache_key", "reasoning", "safety_identifier", "service_tier", "temperature",
          "text", "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "user"}) {
        if (!fields::absent(j, k)) opts.echo[k] = j[k];
    }
    return true;
}

}  // namespace sf
