#include "bench/endurance.h"

#include <random>

#include "bench/workload.h"

namespace sf::bench {

using nlohmann::json;

namespace {

// The tools: every string and integer is bounded, so that a call's arguments fit in a turn's
// max_tokens even on a random-weight model (the grammar a server derives from the schema
// enforces the bounds), and a truncated call means the server stopped it, not the model.
constexpr const char *k_tools = R"([
 {"type": "function", "function": {"name": "read_file", "description": "Read a file of the repository.",
  "parameters": {"type": "object", "properties": {"path": {"type": "string", "maxLength": 40}},
   "required": ["path"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "run_command", "description": "Run a shell command in the repository.",
  "parameters": {"type": "object", "properties": {"command": {"type": "string", "maxLength": 60},
   "timeout_s": {"type": "integer", "minimum": 1, "maximum": 600}},
   "required": ["command", "timeout_s"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "search", "description": "Search the repository for text.",
  "parameters": {"type": "object", "properties": {"query": {"type": "string", "maxLength": 40},
   "max_results": {"type": "integer", "minimum": 1, "maximum": 20}},
   "required": ["query", "max_results"], "additionalProperties": false}}}
])";

// Code points of a UTF-8 string (JSON Schema's maxLength counts characters, not bytes).
size_t code_points(const std::string &s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

// Checks one property value against its schema (string or integer); "" when it matches.
std::string check_value(const std::string &key, const json &v, const json &schema) {
    const std::string type = schema.value("type", "");
    if (type == "string") {
        if (!v.is_string()) return key + " is not a string";
        if (schema.contains("maxLength") &&
            code_points(v.get<std::string>()) > schema["maxLength"].get<size_t>())
            return key + " is longer than " + schema["maxLength"].dump();
    } else if (type == "integer") {
        if (!v.is_number_integer()) return key + " is not an integer";
        const auto x = v.get<long long>();
        if (schema.contains("minimum") && x < schema["minimum"].get<long long>())
            return key + " < minimum";
        if (schema.contains("maximum") && x > schema["maximum"].get<long long>())
            return key + " > maximum";
    }
    return "";
}

// The turn's figures from its stream.
turn_record record_of(const stream_result &s) {
    turn_record t;
    t.ttft_s            = s.ttft_s;
    t.total_s           = s.total_s;
    t.prompt_tokens     = s.prompt_tokens;
    t.cached_tokens     = s.cached_tokens;
    t.completion_tokens = s.completion_tokens;
    t.tool              = s.tool_name;
    t.finish_reason     = s.finish_reason;
    if (!s.ok) {
        t.error      = true;
        t.error_text = s.error;
        return t;
    }
    t.truncated = s.tool_calls == 0 || s.finish_reason == "length";
    if (t.truncated) return t;
    const std::string why = s.tool_calls == 1 ? check_tool_call(s.tool_name, s.tool_arguments)
                                              : "more than one tool call";
    t.valid               = why.empty();
    t.malformed           = !t.valid;
    t.error_text          = why;
    return t;
}

std::string joined(const std::vector<std::string> &pieces) {
    std::string s;
    for (const auto &p : pieces) s += p;
    return s;
}

// The client dropped `cut` mid-answer: resumes it by re-attaching to the session when the server
// gave one (its journal), else by sending the same request again. Returns the whole answer.
stream_result resume(const std::string &base, const json &body, const stream_result &cut,
                     const request_options &opts, interruption_record &ir) {
    ir.happened          = true;
    ir.tokens_before_cut = static_cast<int>(cut.pieces.size());
    const double t0      = now_s();
    stream_result r;
    if (!cut.session.empty()) {
        r             = get_session_stream(base, cut.session, opts);
        ir.reattached = r.ok;
    }
    if (!ir.reattached) {
        r                     = post_chat_stream(base, body, opts);
        ir.prefill_recomputed = std::max(0, r.prompt_tokens - std::max(0, r.cached_tokens));
        ir.decode_recomputed  = ir.tokens_before_cut;
    }
    ir.resume_s   = now_s() - t0;
    ir.consistent = joined(r.pieces).rfind(joined(cut.pieces), 0) == 0;
    // The turn as the agent lived it: its first token came on the first request.
    r.ttft_s  = cut.ttft_s;
    r.total_s = now_s() - cut.sent_at;
    if (ir.reattached && r.prompt_tokens < 0) r.prompt_tokens = cut.prompt_tokens;
    return r;
}

// Appends the assistant's call and the tool's result (or, without a call, a user nudge).
void append_turn(json &messages, const stream_result &s, const turn_record &t, int turn,
                 const std::string &result) {
    if (s.tool_name.empty()) {
        messages.push_back({{"role", "assistant"}, {"content", ""}});
        messages.push_back({{"role", "user"}, {"content", "No tool was called. " + result}});
        return;
    }
    const std::string id = s.tool_call_id.empty() ? "call_" + std::to_string(turn) : s.tool_call_id;
    // A malformed call goes back as an empty object, with the error in its result, as agents
    // recover from one.
    json call = {
        {"id", id},
        {"type", "function"},
        {"function", {{"name", s.tool_name}, {"arguments", t.valid ? s.tool_arguments : "{}"}}}};
    messages.push_back(
        {{"role", "assistant"}, {"content", ""}, {"tool_calls", json::array({call})}});
    const std::string text =
        t.valid ? result : "error: invalid arguments (" + t.error_text + "). " + result;
    messages.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", text}});
}

}  // namespace

const json &endurance_tools() {
    static const json tools = json::parse(k_tools);
    return tools;
}

std::string check_tool_call(const std::string &tool, const std::string &arguments) {
    const json *params = nullptr;
    for (const auto &t : endurance_tools())
        if (t["function"]["name"] == tool) params = &t["function"]["parameters"];
    if (!params) return "unknown tool '" + tool + "'";
    const json a = json::parse(arguments, nullptr, false);
    if (a.is_discarded()) return "arguments are not JSON";
    if (!a.is_object()) return "arguments are not an object";
    for (const auto &k : (*params)["required"])
        if (!a.contains(k.get<std::string>())) return "missing " + k.get<std::string>();
    const json &props = (*params)["properties"];
    for (auto it = a.begin(); it != a.end(); ++it) {
        if (!props.contains(it.key())) return "unexpected property " + it.key();
        if (auto why = check_value(it.key(), it.value(), props[it.key()]); !why.empty()) return why;
    }
    return "";
}

trajectory_record run_trajectory(const std::string &base_url, const trajectory_spec &spec) {
    trajectory_record out;
    const double t0 = now_s();
    json messages   = json::array();
    messages.push_back(
        {{"role", "system"},
         {"content",
          "You are an orchestrator agent in a code repository. Each turn, call exactly "
          "one tool; read its result before the next call.\n\n" +
              text_of_bytes(4242, spec.system_bytes)}});
    // About start_tokens in all: the system prompt (~4 bytes a token) and the tools list aside.
    const int task_tokens = std::max(50, spec.start_tokens - spec.system_bytes / 4 - 400);
    messages.push_back({{"role", "user"},
                        {"content", "Task " + std::to_string(spec.agent + 1) +
                                        ": work through this report, one tool call at a time.\n\n" +
                                        document(9000 + spec.agent, task_tokens)}});
    std::mt19937_64 rng(0x5eed0000ULL + static_cast<uint64_t>(spec.agent));
    std::uniform_int_distribution<int> result_len(spec.result_min,
                                                  std::max(spec.result_min, spec.result_max));
    for (int turn = 1; turn <= spec.turns; ++turn) {
        json body                   = chat_body(messages, spec.call_tokens);
        body["tools"]               = endurance_tools();
        body["tool_choice"]         = "required";
        body["parallel_tool_calls"] = false;  // one call a turn, as the schema check expects
        request_options ro;
        ro.timeout_s = spec.timeout_s;
        ro.detach    = true;  // a dropped client leaves the session to re-attach to
        if (turn == spec.interrupt_at) ro.cut_after_tokens = 2;
        stream_result s = post_chat_stream(base_url, body, ro);
        if (turn == spec.interrupt_at && s.error == "dropped by the client") {
            ro.cut_after_tokens = 0;
            s                   = resume(base_url, body, s, ro, out.interruption);
        }
        turn_record t = record_of(s);
        out.turns.push_back(t);
        if (t.error) break;  // the conversation cannot go on without the turn's answer
        const uint64_t seed =
            100000ULL * static_cast<uint64_t>(spec.agent + 1) + static_cast<uint64_t>(turn);
        append_turn(messages, s, t, turn, words(seed, result_len(rng)));
    }
    out.wall_s = now_s() - t0;
    return out;
}

}  // namespace sf::bench
