#include "api/openai/openai_response.h"

#include <nlohmann/json.hpp>
#include "api/common/json_fields.h"

namespace sf {

using json = nlohmann::json;

const char *openai_finish_reason(finish_reason r) {
    return r == finish_reason::LENGTH ? "length" : "stop";
}

static json usage(const openai_meta &m) {
    return {{"prompt_tokens", m.prompt_tokens},
            {"completion_tokens", m.completion_tokens},
            {"total_tokens", m.prompt_tokens + m.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", m.cached_tokens}}}};
}

// llama-server's "timings" extras, only the speculation counts (when the session drafted).
static void add_timings(json &j, const openai_meta &m) {
    if (m.draft_tokens <= 0) return;
    j["timings"] = {{"draft_n", m.draft_tokens}, {"draft_n_accepted", m.draft_accepted}};
}

std::string openai_completion_response(const openai_meta &m, const std::string &text,
                                       finish_reason reason) {
    json choice = {{"index", 0},
                   {"text", text},
                   {"logprobs", nullptr},
                   {"finish_reason", openai_finish_reason(reason)}};
    json j      = {{"id", m.id},       {"object", "text_completion"},      {"created", m.created},
                   {"model", m.model}, {"choices", json::array({choice})}, {"usage", usage(m)}};
    add_timings(j, m);
    return fields::dump_json(j);
}

std::string openai_chat_chunk(const openai_meta &m, const std::string *text, bool role_chunk,
                              const finish_reason *reason, bool usage_only) {
    json j = {{"id", m.id},
              {"object", "chat.completion.chunk"},
              {"created", m.created},
              {"model", m.model}};
    if (usage_only) {
        j["choices"] = json::array();
        j["usage"]   = usage(m);
        add_timings(j, m);
        return fields::dump_json(j);
    }
    json delta = json::object();
    if (role_chunk) {
        delta["role"]    = "assistant";
        delta["content"] = "";
    }
    if (text) delta["content"] = *text;
    json choice             = {{"index", 0}, {"delta", delta}, {"logprobs", nullptr}};
    choice["finish_reason"] = reason ? json(openai_finish_reason(*reason)) : json(nullptr);
    j["choices"]            = json::array({choice});
    if (reason) add_timings(j, m);  // the last chunk, as llama-server sends them
    return fields::dump_json(j);
}

const char *openai_chat_finish_reason(finish_reason r, bool has_tool_calls) {
    return has_tool_calls && r == finish_reason::STOP ? "tool_calls" : openai_finish_reason(r);
}

std::string openai_chat_message_response(const openai_meta &m, const parsed_message &msg,
                                         const char *finish) {
    json message = {{"role", "assistant"}};
    message["content"] =
        msg.content.empty() && !msg.tool_calls.empty() ? json(nullptr) : json(msg.content);
    if (!msg.reasoning.empty()) message["reasoning_content"] = msg.reasoning;
    if (!msg.tool_calls.empty()) {
        json calls = json::array();
        for (const auto &tc : msg.tool_calls) {
            calls.push_back({{"id", tc.id},
                             {"type", "function"},
                             {"function", {{"name", tc.name}, {"arguments", tc.arguments}}}});
        }
        message["tool_calls"] = calls;
    }
    json choice = {
        {"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", finish}};
    json j = {{"id", m.id},       {"object", "chat.completion"},      {"created", m.created},
              {"model", m.model}, {"choices", json::array({choice})}, {"usage", usage(m)}};
    add_timings(j, m);
    return fields::dump_json(j);
}

static std::string chat_chunk(const openai_meta &m, json delta, json finish) {
    json choice = {{"index", 0},
                   {"delta", std::move(delta)},
                   {"logprobs", nullptr},
                   {"finish_reason", finish}};
    json j      = {{"id", m.id},
                   {"object", "chat.completion.chunk"},
                   {"created", m.created},
                   {"model", m.model},
                   {"choices", json::array({choice})}};
    if (!finish.is_null()) add_timings(j, m);  // the last chunk, as llama-server sends them
    return fields::dump_json(j);
}

std::string openai_chat_delta_chunk(const openai_meta &m, const chat_delta &d) {
    json delta;
    switch (d.type) {
        case chat_delta::kind::CONTENT:
            delta = {{"content", d.text}};
            break;
        case chat_delta::kind::REASONING:
            delta = {{"reasoning_content", d.text}};
            break;
        case chat_delta::kind::TOOL_CALL_START:
            delta = {{"tool_calls",
                      json::array({{{"index", d.tool_index},
                                    {"id", d.id},
                                    {"type", "function"},
                                    {"function", {{"name", d.name}, {"arguments", ""}}}}})}};
            break;
        case chat_delta::kind::TOOL_CALL_ARGS:
            delta = {{"tool_calls", json::array({{{"index", d.tool_index},
                                                  {"function", {{"arguments", d.text}}}}})}};
            break;
    }
    return chat_chunk(m, std::move(delta), nullptr);
}

std::string openai_chat_finish_chunk(const openai_meta &m, const char *finish) {
    return chat_chunk(m, json::object(), finish);
}

std::string openai_completion_chunk(const openai_meta &m, const std::string *text,
                                    const finish_reason *reason, bool usage_only) {
    json j = {
        {"id", m.id}, {"object", "text_completion"}, {"created", m.created}, {"model", m.model}};
    if (usage_only) {
        j["choices"] = json::array();
        j["usage"]   = usage(m);
        add_timings(j, m);
        return fields::dump_json(j);
    }
    json choice             = {{"index", 0}, {"text", text ? *text : ""}, {"logprobs", nullptr}};
    choice["finish_reason"] = reason ? json(openai_finish_reason(*reason)) : json(nullptr);
    j["choices"]            = json::array({choice});
    if (reason) add_timings(j, m);  // the last chunk, as llama-server sends them
    return fields::dump_json(j);
}

}  // namespace sf
