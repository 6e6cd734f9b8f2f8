#include "api/openai_response.h"

#include <nlohmann/json.hpp>

namespace sf {

using json = nlohmann::json;

static std::string dump(const json &j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

const char *openai_finish_reason(finish_reason r) {
    return r == finish_reason::LENGTH ? "length" : "stop";
}

static json usage(const openai_meta &m) {
    return {{"prompt_tokens", m.prompt_tokens},
            {"completion_tokens", m.completion_tokens},
            {"total_tokens", m.prompt_tokens + m.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", m.cached_tokens}}}};
}

std::string openai_chat_response(const openai_meta &m, const std::string &text,
                                 finish_reason reason) {
    json choice = {{"index", 0},
                   {"message", {{"role", "assistant"}, {"content", text}}},
                   {"logprobs", nullptr},
                   {"finish_reason", openai_finish_reason(reason)}};
    return dump({{"id", m.id},
                 {"object", "chat.completion"},
                 {"created", m.created},
                 {"model", m.model},
                 {"choices", json::array({choice})},
                 {"usage", usage(m)}});
}

std::string openai_completion_response(const openai_meta &m, const std::string &text,
                                       finish_reason reason) {
    json choice = {{"index", 0},
                   {"text", text},
                   {"logprobs", nullptr},
                   {"finish_reason", openai_finish_reason(reason)}};
    return dump({{"id", m.id},
                 {"object", "text_completion"},
                 {"created", m.created},
                 {"model", m.model},
                 {"choices", json::array({choice})},
                 {"usage", usage(m)}});
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
        return dump(j);
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
    return dump(j);
}

std::string openai_completion_chunk(const openai_meta &m, const std::string *text,
                                    const finish_reason *reason, bool usage_only) {
    json j = {
        {"id", m.id}, {"object", "text_completion"}, {"created", m.created}, {"model", m.model}};
    if (usage_only) {
        j["choices"] = json::array();
        j["usage"]   = usage(m);
        return dump(j);
    }
    json choice             = {{"index", 0}, {"text", text ? *text : ""}, {"logprobs", nullptr}};
    choice["finish_reason"] = reason ? json(openai_finish_reason(*reason)) : json(nullptr);
    j["choices"]            = json::array({choice});
    return dump(j);
}

}  // namespace sf
