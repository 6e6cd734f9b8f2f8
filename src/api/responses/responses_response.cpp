#include "api/responses/responses_response.h"

#include <algorithm>
#include <cctype>
#include "api/common/json_fields.h"

namespace sf {

using json = nlohmann::json;

namespace {

bool all_space(const std::string &s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

// A custom tool call's input from the arguments the model wrote, {"input": "…"}: the string
// itself; of a call cut short, as much of the string as was written.
std::string custom_input(const std::string &args) {
    const json j = json::parse(args, nullptr, false);
    if (j.is_object() && j.contains("input") && j["input"].is_string())
        return j["input"].get<std::string>();
    if (j.is_object()) return j.size() == 1 ? j.begin()->dump() : j.dump();
    const size_t key   = args.find("\"input\"");
    const size_t colon = key == std::string::npos ? key : args.find(':', key);
    const size_t open  = colon == std::string::npos ? colon : args.find('"', colon);
    if (open == std::string::npos) return "";
    // The string so far, closed: an escape or code point cut at the end is dropped.
    std::string body = args.substr(open + 1);
    for (size_t cut = 0; cut <= 8 && cut <= body.size(); ++cut) {
        const json s = json::parse("\"" + body.substr(0, body.size() - cut) + "\"", nullptr, false);
        if (s.is_string()) return s.get<std::string>();
    }
    return "";
}

}  // namespace

responses_builder::responses_builder(std::string id, std::string model, int64_t created, json echo)
    : id_(std::move(id)),
      model_(std::move(model)),
      created_(created),
      echo_(std::move(echo)),
      tools_(responses_tool_map::of(echo_.is_object() && echo_.contains("tools") ? echo_["tools"]
                                                                                 : json())) {}

std::string responses_builder::event(const char *type, json body) {
    body["type"]            = type;
    body["sequence_number"] = seq_;
    if (seq_++ <= skip_through_) return "";
    return std::string("event: ") + type + "\ndata: " + fields::dump_json(body) + "\n\n";
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
        item = {{"id", "rs_" + id_ + "_" + idx},
                {"type", "reasoning"},
                {"status", "in_progress"},
                {"summary", json::array()}};
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
        // The client's names for the tool the model called (its own when no tool has it).
        const responses_tool *t = tools_.find(call->name);
        const bool custom       = k == item_kind::CUSTOM_TOOL_CALL;
        item                    = {{"id", (custom ? "ctc_" : "fc_") + id_ + "_" + idx},
                                   {"type", custom ? "custom_tool_call" : "function_call"},
                                   {"status", "in_progress"},
                                   {"call_id", call->id}};
        if (t && !t->ns.empty()) item["namespace"] = t->ns;
        item["name"]                         = t ? t->name : call->name;
        item[custom ? "input" : "arguments"] = "";
        custom_args_.clear();
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
    if (k == item_kind::CUSTOM_TOOL_CALL) {
        // The input is a JSON string inside the arguments: sent whole once the call ends.
        custom_args_ += text;
        return "";
    }
    json ev = {{"item_id", item["id"]}, {"output_index", n}, {"delta", text}};
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

std::string responses_builder::close(const char *status) {
    if (open_ == item_kind::NONE) return "";
    json &item     = output_.back();
    const size_t n = output_.size() - 1;
    std::string out;
    if (open_ == item_kind::CUSTOM_TOOL_CALL) {
        const std::string input = custom_input(custom_args_);
        item["input"]           = input;
        if (!input.empty()) {
            out += event("response.custom_tool_call_input.delta",
                         {{"item_id", item["id"]}, {"output_index", n}, {"delta", input}});
        }
        out += event("response.custom_tool_call_input.done",
                     {{"item_id", item["id"]}, {"output_index", n}, {"input", input}});
    } else if (open_ == item_kind::FUNCTION_CALL) {
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
    item["status"] = status;
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
                out += open(tools_.is_custom(d.name) ? item_kind::CUSTOM_TOOL_CALL
                                                     : item_kind::FUNCTION_CALL,
                            &d);
                open_tool_ = d.tool_index;
                pending_ws_.clear();
                break;
            case chat_delta::kind::TOOL_CALL_ARGS:
                if ((open_ == item_kind::FUNCTION_CALL || open_ == item_kind::CUSTOM_TOOL_CALL) &&
                    open_tool_ == d.tool_index)
                    out += append_text(open_, d.text);
                break;
        }
    }
    return out;
}

std::string responses_builder::finish(finish_reason reason, const std::string &error,
                                      int32_t input_tokens, int32_t output_tokens,
                                      int32_t cached_tokens) {
    std::string out;
    if (output_.empty() && !pending_ws_.empty()) {
        // The whole answer was whitespace: it is still the answer.
        out += open(item_kind::MESSAGE, nullptr);
        out += append_text(item_kind::MESSAGE, pending_ws_);
        pending_ws_.clear();
    }
    // The item open at the end was cut short unless the answer stopped by itself.
    out += close(reason == finish_reason::STOP ? "completed" : "incomplete");
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
    if (reason == finish_reason::CANCELLED) {
        status_ = "cancelled";
        return out + event("response.cancelled", {{"response", response()}});
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
