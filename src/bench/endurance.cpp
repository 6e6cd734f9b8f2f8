#include "bench/endurance.h"

#include <chrono>
#include <random>
#include <thread>

#include "bench/endurance_api.h"
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

// The turn's figures from its stream; `named`: the tool tool_choice named ("" any).
turn_record record_of(const stream_result &s, const std::string &named) {
    turn_record t;
    t.ttft_s            = s.ttft_s;
    t.total_s           = s.total_s;
    t.prompt_tokens     = s.prompt_tokens;
    t.cached_tokens     = s.cached_tokens;
    t.completion_tokens = s.completion_tokens;
    t.prefilled_tokens  = s.prefilled_tokens;
    t.named             = named;
    t.tool              = s.tool_name;
    t.finish_reason     = s.finish_reason;
    if (!s.ok) {
        t.error      = true;
        t.error_text = s.error;
        return t;
    }
    t.truncated = s.tool_calls == 0 || s.finish_reason == "length";
    if (t.truncated) return t;
    std::string why = s.tool_calls == 1 ? check_tool_call(s.tool_name, s.tool_arguments)
                                        : "more than one tool call";
    if (why.empty() && !named.empty() && s.tool_name != named)
        why = "called " + s.tool_name + ", not the named " + named;
    t.valid      = why.empty();
    t.malformed  = !t.valid;
    t.error_text = why;
    return t;
}

std::string joined(const std::vector<std::string> &pieces) {
    std::string s;
    for (const auto &p : pieces) s += p;
    return s;
}

// How many of `cut`'s pieces the answer `text` starts with.
int kept_pieces(const std::vector<std::string> &cut, const std::string &text) {
    size_t at = 0;
    int n     = 0;
    for (const auto &p : cut) {
        if (text.compare(at, p.size(), p) != 0) break;
        at += p.size();
        ++n;
    }
    return n;
}

// Waits up to `timeout_s` for GET /health 200.
void await_health(const std::string &base, double timeout_s) {
    const double deadline = now_s() + timeout_s;
    while (now_s() < deadline && http_get(base, "/health", 1.0) != 200)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// The client dropped `cut` mid-answer (and, when `kill`, spec.on_cut killed a process), or its
// stream broke: resumes it by re-attaching to the session when the server gave one (its
// journal), else by sending the same request again. Returns the whole answer.
stream_result resume(const std::string &base, endurance_conversation &conv, const json &body,
                     const stream_result &cut, const trajectory_spec &spec, bool kill,
                     const request_options &opts, interruption_record &ir) {
    ir.happened          = true;
    ir.tokens_before_cut = static_cast<int>(cut.pieces.size());
    const double t0      = now_s();
    if (kill && spec.on_cut) {
        ir.killed     = spec.kill;
        ir.kill_error = spec.on_cut();
    }
    stream_result r;
    if (!cut.session.empty()) {
        r             = conv.reattach(base, cut.session, opts);
        ir.reattached = r.ok;
    }
    if (!ir.reattached) {
        r                     = conv.send(base, body, opts);
        const int prefilled   = r.prefilled_tokens >= 0
                                    ? r.prefilled_tokens
                                    : r.prompt_tokens - std::max(0, r.cached_tokens);
        ir.prefill_recomputed = std::max(0, prefilled);
        ir.decode_recomputed  = ir.tokens_before_cut;
    }
    ir.resume_s    = now_s() - t0;
    const int kept = kept_pieces(cut.pieces, joined(r.pieces));
    ir.consistent  = kept == ir.tokens_before_cut;
    ir.tokens_lost = ir.tokens_before_cut - kept;
    // A re-sent request generates the kept tokens again and delivers them twice; a re-attached
    // stream replays them from the journal (generated once).
    ir.tokens_duplicated = ir.reattached ? 0 : kept;
    if (kill && spec.server_prefilled) ir.server_prefilled = spec.server_prefilled();
    // The turn as the agent lived it: its first token came on the first request.
    r.ttft_s  = cut.ttft_s;
    r.total_s = now_s() - cut.sent_at;
    if (ir.reattached && r.prompt_tokens < 0) r.prompt_tokens = cut.prompt_tokens;
    return r;
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
    // About start_tokens in all: the system prompt (~4 bytes a token) and the tools list aside.
    const int task_tokens = std::max(50, spec.start_tokens - spec.system_bytes / 4 - 400);
    auto conv             = make_conversation(
                    spec.api,
                    "You are an orchestrator agent in a code repository. Each turn, call exactly one tool; "
                                "read its result before the next call.\n\n" +
                        text_of_bytes(4242, spec.system_bytes),
                    "Task " + std::to_string(spec.agent + 1) +
                        ": work through this report, one tool call at a time.\n\n" +
                        document(9000 + spec.agent, task_tokens));
    std::mt19937_64 rng(0x5eed0000ULL + static_cast<uint64_t>(spec.agent));
    std::uniform_int_distribution<int> result_len(spec.result_min,
                                                  std::max(spec.result_min, spec.result_max));
    const json &tools = endurance_tools();
    for (int turn = 1; turn <= spec.turns; ++turn) {
        // Every 4th turn names its tool (the tools in turn); the others let the model choose.
        const std::string named =
            turn % 4 == 0 ? tools[static_cast<size_t>(turn / 4) % tools.size()]["function"]["name"]
                                .get<std::string>()
                          : "";
        const json body = conv->request(named, spec.call_tokens);
        request_options ro;
        ro.timeout_s = spec.timeout_s;
        ro.detach    = true;  // a dropped client leaves the session to re-attach to
        if (turn == spec.interrupt_at) ro.cut_after_tokens = 2;
        stream_result s = conv->send(base_url, body, ro);
        if (turn == spec.interrupt_at && s.error == "dropped by the client") {
            ro.cut_after_tokens = 0;
            s = resume(base_url, *conv, body, s, spec, true, ro, out.interruption);
        } else if (spec.resume_broken && !s.ok) {
            // Broken by a kill in another trajectory: resumed once the server answers again.
            await_health(base_url, 300);
            out.broken.emplace_back();
            s = resume(base_url, *conv, body, s, spec, false, ro, out.broken.back());
        }
        conv->normalize(s);
        turn_record t = record_of(s, named);
        out.turns.push_back(t);
        if (t.error) break;  // the conversation cannot go on without the turn's answer
        const uint64_t seed =
            100000ULL * static_cast<uint64_t>(spec.agent + 1) + static_cast<uint64_t>(turn);
        conv->append(s, t.valid, t.error_text, turn, words(seed, result_len(rng)));
    }
    out.wall_s = now_s() - t0;
    return out;
}

}  // namespace sf::bench
