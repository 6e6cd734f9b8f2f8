#include "api/anthropic/anthropic_response.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>

#include "api/common/json_fields.h"

namespace sf {

using json = nlohmann::json;

const char *const k_thinking_signature = "superfluid-unsigned";

const char *anthropic_error_type(int status) {
    switch (status) {
        case 400:
            return "invalid_request_error";
        case 401:
            return "authentication_error";
        case 403:
            return "permission_error";
        case 404:
            return "not_found_error";
        case 413:
            return "request_too_large";
        case 429:
            return "rate_limit_error";
        case 503:
        case 529:
            return "overloaded_error";
        default:
            return status < 500 ? "invalid_request_error" : "api_error";
    }
}

std::string anthropic_error_body(const api_error &e) {
    return fields::dump_json(
        {{"type", "error"},
         {"error", {{"type", anthropic_error_type(e.status)}, {"message", e.message}}}});
}

std::string anthropic_stop_reason(const session_event &fin, bool has_tool_calls,
                                  const std::vector<std::string> &client_stops,
                                  std::string &stop_sequence) {
    stop_sequence.clear();
    if (fin.reason == finish_reason::LENGTH) return "max_tokens";
    if (has_tool_calls) return "tool_use";
    for (const auto &s : client_stops) {
        if (!fin.stop_string.empty() && s == fin.stop_string) {
            stop_sequence = s;
            return "stop_sequence";
        }
    }
    return "end_turn";
}

// Anthropic's usage: input_tokens counts only the prompt tokens not read from the cache, so
// input + cache_read + cache_creation is the whole prompt (what count_tokens returns).
// cache_creation_input_tokens is always 0: our cache needs no cache_control breakpoints and
// writing to it costs nothing extra, whereas Anthropic bills creation at a premium; reporting
// the newly cached tokens there would make clients that price usage (Claude Code's cost
// line) charge a cache write, and would leave input_tokens near 0 on every cold request.
static json usage(const anthropic_meta &m) {
    const int32_t cached = std::clamp(m.cached_tokens, 0, m.prompt_tokens);
    return {{"input_tokens", m.prompt_tokens - cached},
            {"output_tokens", m.output_tokens},
            {"cache_creation_input_tokens", 0},
            {"cache_read_input_tokens", cached}};
}

// A tool call's input: its arguments as a JSON object ({} when they are not one, e.g. cut
// short by max_tokens).
static json tool_input(const std::string &arguments) {
    json in = json::parse(arguments, nullptr, false);
    return in.is_object() ? in : json::object();
}

std::string anthropic_message_response(const anthropic_meta &m, const parsed_message &msg,
                                       const std::string &stop_reason,
                                       const std::string &stop_sequence) {
    json content = json::array();
    if (!msg.reasoning.empty())
        content.push_back({{"type", "thinking"},
                           {"thinking", msg.reasoning},
                           {"signature", k_thinking_signature}});
    if (!msg.content.empty() || (msg.reasoning.empty() && msg.tool_calls.empty()))
        content.push_back({{"type", "text"}, {"text", msg.content}});
    for (const auto &tc : msg.tool_calls) {
        content.push_back({{"type", "tool_use"},
                           {"id", tc.id},
                           {"name", tc.name},
                           {"input", tool_input(tc.arguments)}});
    }
    return fields::dump_json(
        {{"id", m.id},
         {"type", "message"},
         {"role", "assistant"},
         {"model", m.model},
         {"content", content},
         {"stop_reason", stop_reason},
         {"stop_sequence", stop_sequence.empty() ? json(nullptr) : json(stop_sequence)},
         {"usage", usage(m)}});
}

anthropic_stream::event anthropic_stream::ping() {
    return {"ping", R"({"type":"ping"})"};
}

std::vector<anthropic_stream::event> anthropic_stream::start(int32_t cached_tokens) {
    meta_.cached_tokens = cached_tokens;
    json msg = {{"id", meta_.id},           {"type", "message"},        {"role", "assistant"},
                {"model", meta_.model},     {"content", json::array()}, {"stop_reason", nullptr},
                {"stop_sequence", nullptr}, {"usage", usage(meta_)}};
    return {{"message_start", fields::dump_json({{"type", "message_start"}, {"message", msg}})},
            ping()};
}

void anthropic_stream::open(block b, const std::string &content_block_json,
                            std::vector<event> &out) {
    close(out);
    open_ = b;
    ++index_;
    out.push_back({"content_block_start", R"({"type":"content_block_start","index":)" +
                                              std::to_string(index_) + R"(,"content_block":)" +
                                              content_block_json + "}"});
}

void anthropic_stream::close(std::vector<event> &out) {
    if (open_ == block::NONE) return;
    if (open_ == block::THINKING) {
        out.push_back(
            {"content_block_delta",
             fields::dump_json(
                 {{"type", "content_block_delta"},
                  {"index", index_},
                  {"delta", {{"type", "signature_delta"}, {"signature", k_thinking_signature}}}})});
    }
    out.push_back({"content_block_stop",
                   fields::dump_json({{"type", "content_block_stop"}, {"index", index_}})});
    open_ = block::NONE;
}

std::vector<anthropic_stream::event> anthropic_stream::on_delta(const chat_delta &d) {
    std::vector<event> out;
    json delta;
    switch (d.type) {
        case chat_delta::kind::REASONING:
            if (open_ != block::THINKING)
                open(block::THINKING, R"({"type":"thinking","thinking":"","signature":""})", out);
            delta = {{"type", "thinking_delta"}, {"thinking", d.text}};
            break;
        case chat_delta::kind::CONTENT:
            if (open_ != block::TEXT) open(block::TEXT, R"({"type":"text","text":""})", out);
            delta = {{"type", "text_delta"}, {"text", d.text}};
            break;
        case chat_delta::kind::TOOL_CALL_START:
            open(block::TOOL,
                 fields::dump_json({{"type", "tool_use"},
                                    {"id", d.id},
                                    {"name", d.name},
                                    {"input", json::object()}}),
                 out);
            tool_idx_ = d.tool_index;
            return out;
        case chat_delta::kind::TOOL_CALL_ARGS:
            if (open_ != block::TOOL || tool_idx_ != d.tool_index) return out;
            delta = {{"type", "input_json_delta"}, {"partial_json", d.text}};
            break;
    }
    out.push_back({"content_block_delta",
                   fields::dump_json(
                       {{"type", "content_block_delta"}, {"index", index_}, {"delta", delta}})});
    return out;
}

std::vector<anthropic_stream::event> anthropic_stream::finish(const std::string &stop_reason,
                                                              const std::string &stop_sequence,
                                                              int32_t output_tokens,
                                                              int32_t cached_tokens) {
    std::vector<event> out;
    if (index_ < 0) open(block::TEXT, R"({"type":"text","text":""})", out);  // never no block
    close(out);
    meta_.output_tokens = output_tokens;
    meta_.cached_tokens = cached_tokens;
    out.push_back(
        {"message_delta",
         fields::dump_json(
             {{"type", "message_delta"},
              {"delta",
               {{"stop_reason", stop_reason},
                {"stop_sequence", stop_sequence.empty() ? json(nullptr) : json(stop_sequence)}}},
              {"usage", usage(meta_)}})});
    out.push_back({"message_stop", R"({"type":"message_stop"})"});
    return out;
}

std::vector<anthropic_stream::event> anthropic_stream::fail(const api_error &e) {
    std::vector<event> out;
    close(out);
    out.push_back({"error", anthropic_error_body(e)});
    return out;
}

api_error anthropic_refusal(const start_error &se) {
    api_error e;
    e.message = se.message;
    e.param   = se.param;
    switch (se.type) {
        case start_error::kind::INVALID_REQUEST:
            e.status = 400;
            break;
        case start_error::kind::CONTEXT_LENGTH: {
            // Anthropic's wording, which agents parse to decide when to compact the context.
            e.status = 400;
            std::smatch m;
            static const std::regex counts(R"((\d+) tokens > (\d+) maximum)");
            if (std::regex_search(se.message, m, counts))
                e.message =
                    "prompt is too long: " + m[1].str() + " tokens > " + m[2].str() + " maximum";
            break;
        }
        case start_error::kind::UNAVAILABLE:
            e.status = 503;
            break;
        case start_error::kind::OVERLOADED:
            e.status = 529;
            break;
        case start_error::kind::INTERNAL:
            e.status = 500;
            break;
    }
    return e;
}

}  // namespace sf
