#include "api/session_state.h"

#include <nlohmann/json.hpp>

#include <chrono>

#include "api/openai_response.h"

namespace sf {

namespace {

// Invalid UTF-8 replaced exactly as the stream chunks do (nlohmann's `replace` handler, one
// event at a time), so the state's text equals the concatenated stream.
std::string as_streamed(const std::string &piece) {
    if (piece.empty()) return piece;
    return nlohmann::json::parse(
               nlohmann::json(piece).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
        .get<std::string>();
}

}  // namespace

std::string session_state_body(session &s, bool interrupted) {
    std::vector<session_event> tokens;
    std::optional<session_event> fin;
    s.read(0, tokens, fin, std::chrono::milliseconds(0));
    std::string text;
    for (const auto &t : tokens) text += as_streamed(t.text);
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
                text += as_streamed(fin->text);
                last_id = s.id() + ":" + std::to_string(fin->completion_tokens);
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
                          {"total_tokens", s.prompt_tokens() + completion}};
    j["text"]          = text;
    j["last_event_id"] = last_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(last_id);
    return j.dump();
}

}  // namespace sf
