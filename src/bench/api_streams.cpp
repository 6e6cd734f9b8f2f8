#include "bench/api_streams.h"

namespace sf::bench {

using nlohmann::json;

namespace {

// j[key] as a string ("" when absent or not a string).
std::string str(const json &j, const char *key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// j[key] as an int (`fallback` when absent or not a number).
int num_of(const json &j, const char *key, int fallback) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<int>() : fallback;
}

}  // namespace

void json_lines_feeder::feed(const char *data, size_t len, double t) {
    split_lines(buf_, data, len, [&](std::string l) {
        if (l.rfind("data:", 0) == 0) {
            l.erase(0, 5);
            if (!l.empty() && l[0] == ' ') l.erase(0, 1);
        } else if (l.empty() || l[0] != '{') {
            return;  // SSE event:, id:, comments, blank lines
        }
        json j = json::parse(l, nullptr, false);
        if (j.is_object()) event(j, t);
    });
}

void json_lines_feeder::piece(std::string text, double t) {
    if (text.empty()) return;
    if (out_.ttft_s < 0) out_.ttft_s = t;
    out_.token_times.push_back(t);
    out_.pieces.push_back(std::move(text));
}

void anthropic_reader::event(const json &j, double t) {
    const std::string type = str(j, "type");
    // Usage comes in message_start (input side) and message_delta (cumulative): later wins.
    auto usage = [&](const json &u) {
        if (!u.is_object()) return;
        const int in = num_of(u, "input_tokens", -1);
        if (in >= 0) {
            out_.prompt_tokens = in + std::max(0, num_of(u, "cache_read_input_tokens", 0)) +
                                 std::max(0, num_of(u, "cache_creation_input_tokens", 0));
            out_.cached_tokens = std::max(0, num_of(u, "cache_read_input_tokens", 0));
        }
        const int outn = num_of(u, "output_tokens", -1);
        if (outn > 0 || (outn == 0 && out_.completion_tokens < 0)) out_.completion_tokens = outn;
    };
    if (type == "message_start") {
        usage(j.value("message", json::object()).value("usage", json::object()));
    } else if (type == "message_delta") {
        const std::string stop = str(j.value("delta", json::object()), "stop_reason");
        if (stop == "max_tokens")
            out_.finish_reason = "length";
        else if (stop == "tool_use")
            out_.finish_reason = "tool_calls";
        else if (!stop.empty())
            out_.finish_reason = "stop";
        usage(j.value("usage", json::object()));
    } else if (type == "content_block_start") {
        const json cb = j.value("content_block", json::object());
        if (str(cb, "type") == "tool_use") {
            if (++out_.tool_calls == 1) {
                out_.tool_name    = str(cb, "name");
                out_.tool_call_id = str(cb, "id");
                first_tool_block_ = num_of(j, "index", 0);
            }
            piece(str(cb, "name"), t);  // the call's header is visible output
        }
    } else if (type == "content_block_delta") {
        const json d           = j.value("delta", json::object());
        const std::string kind = str(d, "type");
        if (kind == "text_delta") piece(str(d, "text"), t);
        if (kind == "thinking_delta") piece(str(d, "thinking"), t);
        if (kind == "input_json_delta") {
            const std::string a = str(d, "partial_json");
            if (num_of(j, "index", -1) == first_tool_block_) out_.tool_arguments += a;
            piece(a, t);
        }
    } else if (type == "message_stop") {
        out_.done = true;
    } else if (type == "error") {
        out_.cut   = true;
        out_.error = str(j.value("error", json::object()), "message");
        if (out_.error.empty()) out_.error = "in-band error";
    }
}

void responses_reader::usage(const json &response) {
    const json u = response.is_object() ? response.value("usage", json::object()) : json::object();
    if (!u.is_object()) return;
    out_.prompt_tokens     = num_of(u, "input_tokens", out_.prompt_tokens);
    out_.completion_tokens = num_of(u, "output_tokens", out_.completion_tokens);
    const json d           = u.value("input_tokens_details", json::object());
    out_.cached_tokens     = num_of(d, "cached_tokens", out_.cached_tokens);
}

void responses_reader::event(const json &j, double t) {
    const std::string type = str(j, "type");
    if (type == "response.output_item.added") {
        const json item = j.value("item", json::object());
        if (str(item, "type") != "function_call") return;
        if (++out_.tool_calls == 1) {
            out_.tool_name    = str(item, "name");
            out_.tool_call_id = str(item, "call_id");
            first_call_item_  = str(item, "id");
        }
        piece(str(item, "name"), t);
    } else if (type == "response.function_call_arguments.delta") {
        const std::string a = str(j, "delta");
        if (str(j, "item_id") == first_call_item_) out_.tool_arguments += a;
        piece(a, t);
    } else if (type == "response.function_call_arguments.done") {
        // A server that sends the arguments whole, without deltas.
        if (str(j, "item_id") == first_call_item_ && out_.tool_arguments.empty())
            out_.tool_arguments = str(j, "arguments");
    } else if (type == "response.output_text.delta" || type == "response.reasoning_text.delta" ||
               type == "response.reasoning_summary_text.delta") {
        piece(str(j, "delta"), t);
    } else if (type == "response.completed" || type == "response.incomplete") {
        out_.done = true;
        usage(j.value("response", json::object()));
        out_.finish_reason = type == "response.incomplete" ? "length"
                             : out_.tool_calls > 0         ? "tool_calls"
                                                           : "stop";
    } else if (type == "response.failed" || type == "error") {
        out_.cut         = true;
        const json &e    = type == "error" ? j : j.value("response", json::object());
        const json error = e.value("error", json::object());
        out_.error       = str(error.is_object() ? error : e, "message");
        if (out_.error.empty()) out_.error = type;
    }
}

void ollama_reader::event(const json &j, double t) {
    if (j.contains("error")) {
        out_.cut   = true;
        out_.error = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
        return;
    }
    const json m = j.value("message", json::object());
    if (m.is_object()) {
        piece(str(m, "thinking"), t);
        piece(str(m, "content"), t);
        if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
            for (const json &tc : m["tool_calls"]) {
                const json f = tc.is_object() ? tc.value("function", json::object()) : json();
                const json &args =
                    f.is_object() && f.contains("arguments") ? f["arguments"] : json();
                const std::string a = args.is_string() ? args.get<std::string>() : args.dump();
                if (++out_.tool_calls == 1) {
                    out_.tool_name      = str(f, "name");
                    out_.tool_call_id   = str(tc, "id");
                    out_.tool_arguments = a;
                }
                piece(str(f, "name") + a, t);
            }
        }
    }
    if (j.value("done", false)) {
        out_.done                = true;
        const std::string reason = str(j, "done_reason");
        out_.finish_reason       = reason == "length"    ? "length"
                                   : out_.tool_calls > 0 ? "tool_calls"
                                                         : "stop";
        out_.prefilled_tokens    = num_of(j, "prompt_eval_count", -1);
        out_.completion_tokens   = num_of(j, "eval_count", -1);
    }
}

}  // namespace sf::bench
