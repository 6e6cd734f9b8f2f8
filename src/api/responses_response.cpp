#include "api/responses_response.h"

#include <algorithm>
#include <cctype>

namespace sf {

using json = nlohmann::json;

namespace {

std::string dump(const json &j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool all_space(const std::string &s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

}  // namespace

responses_builder::responses_builder(std::string id, std::string model, int64_t created, json echo)
    : id_(std::move(id)), model_(std::move(model)), created_(created), echo_(std::move(echo)) {}

std::string responses_builder::event(const char *type, json body) {
    body["type"]            = type;
    body["sequence_number"] = seq_++;
    return std::string("event: ") + type + "\ndata: " + dump(body) + "\n\n";
}

json responses_builder::response() const {
    json r = {{"id", id_},
              {"object", "response"},
              {"created_at", created_},
              {"status", status_},
              {"background", false},
              {"error", error_},
              {"incomplete_details", incomplete_},
              {"instructions", nullptr},
              {"max_output_tokens", nullptr},
              {"metadata", json::object()},
              {"model", model_},
              {"output", output_},
              {"parallel_tool_calls", true},
              {"previous_response_id", nullptr},
              {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
              {"store", false},
              {"temperature", 1.0},
              {"text", {{"format", {{"type", "text"}}}}},
              {"tool_choice", "auto"},
              {"tools", json::array()},
              {"top_p", 1.0},
              {"truncation", "disabled"},
              {"usage", usage_}};
    for (auto it = echo_.begin(); it != echo_.end(); ++it) r[it.key()] = it.value();
    return r;
}

std::string responses_builder::start() {
    // Sequenced statements: the operands of `+` may be evaluated in any order.
    std::string out = event("response.created", {{"response", response()}});
    out += event("response.in_progress", {{"response", response()}});
    return out;
}

std::string responses_builder::open(item_kind k, const chat_delta *call) {
    const size_t n = output_.size();
    const auto idx = std::to_string(n);
    json item;
    json part;
    if (k == item_kind::REASONING) {
        item = {{"id", "rs_" + id_ + "_" + idx}, {"type", "reasoning"}, {"summary", json::array()}};
        part = {{"type", "reasoning_text"}, {"text", ""}};
    } else if (k == item_kind::MESSAGE) {
        item = {{"id", "msg_" + id_ + "_" + idx},
                {"type", "message"},
                {"status", "in_progress"},
                {"role", "assistant"},
                {"content", json::array()}};
        part = {{"type", "output_text"},
                {"text", ""},
                {"annotations", json::array()},
                {"logprobs", json::array()}};
    } else {
        item = {
            {"id", "fc_" + id_ + "_" + idx}, {"type", "function_call"}, {"status", "in_progress"},
            {"call_id", call->id},           {"name", call->name},      {"arguments", ""}};
    }
    std::string out = event("response.output_item.added", {{"output_index", n}, {"item", item}});
    if (!part.is_null()) {
        out += event(
            "response.content_part.added",
            {{"item_id", item["id"]}, {"output_index", n}, {"content_index", 0}, {"part", part}});
        item["content"] = json::array({part});
    }
    output_.push_back(std::move(item));
    open_ = k;
    return out;
}

std::string responses_builder::append_text(item_kind k, const std::string &text) {
    json &item     = output_.back();
    const size_t n = output_.size() - 1;
    json ev        = {{"item_id", item["id"]}, {"output_index", n}, {"delta", text}};
    if (k == item_kind::FUNCTION_CALL) {
        item["arguments"] = item["arguments"].get<std::string>() + text;
        return event("response.function_call_arguments.delta", std::move(ev));
    }
    json &part          = item["content"][0];
    part["text"]        = part["text"].get<std::string>() + text;
    ev["content_index"] = 0;
    if (k == item_kind::REASONING) return event("response.reasoning_text.delta", std::move(ev));
    ev["logprobs"] = json::array();
    return event("response.output_text.delta", std::move(ev));
}

std::string responses_builder::close() {
    if (open_ == item_kind::NONE) return "";
    json &item     = output_.back();
    const size_t n = output_.size() - 1;
    std::string out;
    if (open_ == item_kind::FUNCTION_CALL) {
        out += event("response.function_call_arguments.done", {{"item_id", item["id"]},
                                                               {"output_index", n},
                                                               {"name", item["name"]},
                                                               {"arguments", item["arguments"]}});
    } else {
        const json &part = item["content"][0];
        json done        = {{"item_id", item["id"]},
                            {"output_index", n},
                            {"content_index", 0},
                            {"text", part["text"]}};
        if (open_ == item_kind::MESSAGE) done["logprobs"] = json::array();
        out += event(open_ == item_kind::MESSAGE ? "response.output_text.done"
                                                 : "response.reasoning_text.done",
                     std::move(done));
        out += event(
            "response.content_part.done",
            {{"item_id", item["id"]}, {"output_index", n}, {"content_index", 0}, {"part", part}});
    }
    if (open_ != item_kind::REASONING) item["status"] = "completed";
    out += event("response.output_item.done", {{"output_index", n}, {"item", item}});
    open_ = item_kind::NONE;
    return out;
}

std::string responses_builder::apply(const std::vector<chat_delta> &deltas) {
    std::string out;
    for (const auto &d : deltas) {
        switch (d.type) {
            case chat_delta::kind::REASONING:
                if (open_ != item_kind::REASONING) {
                    out += close();
                    out += open(item_kind::REASONING, nullptr);
                }
                out += append_text(item_kind::REASONING, d.text);
                break;
            case chat_delta::kind::CONTENT:
                if (open_ != item_kind::MESSAGE) {
                    // Whitespace between reasoning and tool calls makes no message of its own.
                    if (all_space(pending_ws_ + d.text)) {
                        pending_ws_ += d.text;
                        break;
                    }
                    out += close();
                    out += open(item_kind::MESSAGE, nullptr);
                }
                out += append_text(item_kind::MESSAGE, pending_ws_ + d.text);
                pending_ws_.clear();
                break;
            case chat_delta::kind::TOOL_CALL_START:
                out += close();
                out += open(item_kind::FUNCTION_CALL, &d);
                open_tool_ = d.tool_index;
                pending_ws_.clear();
                break;
            case chat_delta::kind::TOOL_CALL_ARGS:
                if (open_ == item_kind::FUNCTION_CALL && open_tool_ == d.tool_index)
                    out += append_text(item_kind::FUNCTION_CALL, d.text);
                break;
        }
    }
    return out;
}

std::string responses_builder::finish(finish_reason reason, const std::string &error,
                                      int32_t input_tokens, int32_t cached_tokens,
                                      int32_t output_tokens) {
    std::string out;
    if (output_.empty() && !pending_ws_.empty()) {
        // The whole answer was whitespace: it is still the answer.
        out += open(item_kind::MESSAGE, nullptr);
        out += append_text(item_kind::MESSAGE, pending_ws_);
        pending_ws_.clear();
    }
    out += close();
    usage_ = {{"input_tokens", input_tokens},
              {"input_tokens_details", {{"cached_tokens", cached_tokens}}},
              {"output_tokens", output_tokens},
              {"output_tokens_details", {{"reasoning_tokens", 0}}},
              {"total_tokens", input_tokens + output_tokens}};
    if (!error.empty()) {
        status_ = "failed";
        error_  = {{"code", "server_error"}, {"message", error}};
        return out + event("response.failed", {{"response", response()}});
    }
    if (reason == finish_reason::LENGTH) {
        status_     = "incomplete";
        incomplete_ = {{"reason", "max_output_tokens"}};
        return out + event("response.incomplete", {{"response", response()}});
    }
    status_ = "completed";
    return out + event("response.completed", {{"response", response()}});
}

}  // namespace sf
