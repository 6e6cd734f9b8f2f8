#include "api/ollama/ollama_response.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include "api/common/json_fields.h"

namespace sf {

using json = nlohmann::json;

namespace {

// Ollama's tool call: arguments are an object. Text that does not parse stays a string.
json tool_calls_json(const std::vector<tool_call> &calls) {
    json out = json::array();
    for (size_t i = 0; i < calls.size(); ++i) {
        json args = json::parse(calls[i].arguments, nullptr, false);
        if (args.is_discarded()) args = calls[i].arguments;
        json fn     = {{"name", calls[i].name}, {"arguments", args}};
        fn["index"] = i;
        json tc     = {{"function", fn}};
        if (!calls[i].id.empty()) tc["id"] = calls[i].id;
        out.push_back(std::move(tc));
    }
    return out;
}

void add_done(json &j, const ollama_done *done) {
    j["done"] = done != nullptr;
    if (!done) return;
    j["done_reason"] = done->reason;
    if (done->context) j["context"] = *done->context;
    if (!done->with_stats) return;
    const auto &s             = done->stats;
    j["total_duration"]       = s.total_ns;
    j["load_duration"]        = s.load_ns;
    j["prompt_eval_count"]    = s.prompt_eval_count;
    j["prompt_eval_duration"] = s.prompt_eval_ns;
    j["eval_count"]           = s.eval_count;
    j["eval_duration"]        = s.eval_ns;
}

}  // namespace

std::string ollama_timestamp() {
    auto now = std::chrono::system_clock::now();
    auto ns  = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    time_t t = static_cast<time_t>(ns / 1000000000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof buf - n, ".%09lldZ", static_cast<long long>(ns % 1000000000));
    return buf;
}

std::string ollama_chat_line(const std::string &model, const ollama_delta &d,
                             const ollama_done *done) {
    json msg = {{"role", "assistant"}, {"content", d.content}};
    if (!d.thinking.empty()) msg["thinking"] = d.thinking;
    if (!d.tool_calls.empty()) msg["tool_calls"] = tool_calls_json(d.tool_calls);
    json j = {{"model", model}, {"created_at", ollama_timestamp()}, {"message", msg}};
    add_done(j, done);
    return fields::dump_json(j);
}

std::string ollama_generate_line(const std::string &model, const ollama_delta &d,
                                 const ollama_done *done) {
    json j = {{"model", model}, {"created_at", ollama_timestamp()}, {"response", d.content}};
    if (!d.thinking.empty()) j["thinking"] = d.thinking;
    add_done(j, done);
    return fields::dump_json(j);
}

std::string ollama_error_body(const std::string &message) {
    return fields::dump_json({{"error", message}});
}

int ollama_refusal_status(const start_error &se) {
    return se.type == start_error::kind::OVERLOADED ? 503 : refusal_status(se);
}

}  // namespace sf
