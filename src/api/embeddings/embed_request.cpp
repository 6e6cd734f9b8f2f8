#include "api/embeddings/embed_request.h"

#include <nlohmann/json.hpp>

#include <climits>

#include "api/common/json_fields.h"

namespace sf {

using json = nlohmann::json;

namespace {

// A JSON array of token ids, or false.
bool token_ids(const json &a, std::vector<token_id> &out) {
    if (!a.is_array() || a.empty()) return false;
    for (const auto &t : a) {
        if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
            return false;
        out.push_back(static_cast<token_id>(t.get<int64_t>()));
    }
    return true;
}

bool model_and_dimensions(const json &j, embed_job &out, api_error &err) {
    if (!fields::string(j, "model", out.model, err)) return false;
    int64_t dims = 0;
    bool present = false;
    if (!fields::integer(j, "dimensions", 1, INT32_MAX, dims, present, err)) return false;
    out.dimensions = present ? static_cast<int>(dims) : 0;
    return true;
}

// `input` as a string or an array of strings (Ollama; also OpenAI's first two forms).
bool text_inputs(const json &in, embed_job &out) {
    if (in.is_string()) {
        out.inputs.push_back({true, in.get<std::string>(), {}});
        return true;
    }
    if (!in.is_array()) return false;
    for (const auto &x : in) {
        if (!x.is_string()) return false;
        out.inputs.push_back({true, x.get<std::string>(), {}});
    }
    return true;
}

}  // namespace

bool parse_openai_embeddings(const std::string &body, embed_job &out, api_error &err) {
    json j;
    if (!fields::parse_object(body, j, err) || !model_and_dimensions(j, out, err)) return false;
    std::string fmt = "float";
    if (!fields::string(j, "encoding_format", fmt, err)) return false;
    if (fmt != "float" && fmt != "base64") {
        err = bad_request("'encoding_format' must be \"float\" or \"base64\"", "encoding_format",
                          "invalid_value");
        return false;
    }
    out.base64 = fmt == "base64";
    if (fields::absent(j, "input")) {
        err = bad_request("'input' is required", "input", "missing_required_parameter");
        return false;
    }
    const json &in = j["input"];
    bool ok        = false;
    if (in.is_array() && !in.empty() && in[0].is_number_integer()) {
        embed_input item{false, "", {}};
        ok = token_ids(in, item.tokens);
        out.inputs.push_back(std::move(item));
    } else if (in.is_array() && !in.empty() && in[0].is_array()) {
        ok = true;
        for (const auto &row : in) {
            embed_input item{false, "", {}};
            ok = ok && token_ids(row, item.tokens);
            out.inputs.push_back(std::move(item));
        }
    } else {
        ok = text_inputs(in, out) && !out.inputs.empty();
    }
    if (!ok) {
        err = bad_request(
            "'input' must be a non-empty string, an array of strings, an array of token ids or "
            "an array of token-id arrays",
            "input", "invalid_type");
        return false;
    }
    for (const auto &i : out.inputs) {
        if (i.is_text && i.text.empty()) {
            err = bad_request("'input' must not contain empty strings", "input", "invalid_value");
            return false;
        }
    }
    return true;
}

bool parse_ollama_embed(const std::string &body, embed_job &out, api_error &err) {
    json j;
    if (!fields::parse_object(body, j, err) || !model_and_dimensions(j, out, err)) return false;
    out.truncate = true;  // Ollama's default
    if (!fields::boolean(j, "truncate", out.truncate, err)) return false;
    if (!fields::absent(j, "input") && !text_inputs(j["input"], out)) {
        err =
            bad_request("'input' must be a string or an array of strings", "input", "invalid_type");
        return false;
    }
    // Ollama embeds nothing for an empty string (it is a load request).
    if (out.inputs.size() == 1 && out.inputs[0].text.empty()) out.inputs.clear();
    return true;
}

bool parse_ollama_embeddings(const std::string &body, embed_job &out, api_error &err) {
    json j;
    if (!fields::parse_object(body, j, err) || !fields::string(j, "model", out.model, err))
        return false;
    std::string prompt;
    if (!fields::string(j, "prompt", prompt, err)) return false;
    out.truncate = true;
    if (!prompt.empty()) out.inputs.push_back({true, prompt, {}});
    return true;
}

}  // namespace sf
