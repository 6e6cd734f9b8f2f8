#include "api/common/session_state.h"

#include <nlohmann/json.hpp>

#include <chrono>

#include "api/openai/openai_response.h"
#include "chat/output_parser.h"

namespace sf {

namespace {

// Invalid UTF-8 replaced exactly as the stream chunks do (nlohmann's `replace` handler), so the
// state's text equals the concatenated stream.
std::string as_streamed(const std::string &piece) {
    if (piece.empty()) return piece;
    return nlohmann::json::parse(
               nlohmann::json(piece).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
        .get<std::string>();
}

}  // namespace

bool session_is_chat(const session &s) {
    return s.api() != "openai.completion" && s.api() != "ollama.generate";
}

std::string session_state_body(session &s, bool interrupted,
                               const std::vector<placement_note> &placements) {
    std::vector<session_event> tokens;
    std::optional<session_event> fin;
    s.read(0, tokens, fin, std::chrono::milliseconds(0));
    // The streams flush the parser (and the held-back tail) at any end but an error.
    const bool ended_well = fin && fin->reason != finish_reason::ERROR;
    // Chat answers go through the chat output parser token by token, as every stream does, so
    // `text` is the content a stream delivered (reasoning and tool calls apart, whitespace the
    // parser trims trimmed); prompt-style answers are the released text as is.
    std::string text;
    nlohmann::json reasoning  = nullptr;
    nlohmann::json tool_calls = nullptr;
    if (session_is_chat(s)) {
        chat_output_parser parser(s.parse_spec(), "call_" + s.id() + "_");
        for (const auto &t : tokens)
            if (!t.text.empty()) parser.push(t.text);
        if (ended_well) {
            parser.push(fin->text);
            parser.finish();
        }
        const parsed_message &m = parser.message();
        text                    = as_streamed(m.content);
        if (!m.reasoning.empty()) reasoning = as_streamed(m.reasoning);
        if (!m.tool_calls.empty()) {
            tool_calls = nlohmann::json::array();
            for (const auto &c : m.tool_calls)
                tool_calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
        }
    } else {
        for (const auto &t : tokens) text += as_streamed(t.text);
        if (ended_well) text += as_streamed(fin->text);
    }
    nlohmann::json j = {
        {"id", s.id()},       {"object", "session"},         {"api", s.api()},
        {"model", s.model()}, {"created", s.created_unix()}, {"finish_reason", nullptr},
        {"error", nullptr}};
    int32_t completion = static_cast<int32_t>(tokens.size());
    std::string status = "running";
    std::string last_id;
    if (!tokens.empty()) last_id = s.id() + ":" + std::to_string(tokens.back().index);
    if (fin) {
        completion = fin->completion_tokens;
        switch (fin->reason) {
            case finish_reason::STOP:
            case finish_reason::LENGTH:
                status             = "completed";
                j["finish_reason"] = openai_finish_reason(fin->reason);
                last_id            = s.id() + ":" + std::to_string(fin->completion_tokens);
                break;
            case finish_reason::CANCELLED:
                status = "cancelled";
                break;
            case finish_reason::ERROR:
                status     = interrupted ? "interrupted" : "failed";
                j["error"] = fin->error;
                break;
        }
    }
    j["status"]        = status;
    j["usage"]         = {{"prompt_tokens", s.prompt_tokens()},
                          {"completion_tokens", completion},
                          {"total_tokens", s.prompt_tokens() + completion},
                          {"prompt_tokens_details", {{"cached_tokens", s.cached_tokens()}}}};
    j["text"]          = text;
    j["reasoning"]     = reasoning;
    j["tool_calls"]    = tool_calls;
    j["last_event_id"] = last_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(last_id);
    j["placements"]    = nlohmann::json::array();
    for (const auto &p : placements)
        j["placements"].push_back({{"epoch", p.epoch},
                                   {"node", p.node},
                                   {"from_index", p.from_index},
                                   {"at_ms", p.at_ms}});
    return j.dump();
}

}  // namespace sf
