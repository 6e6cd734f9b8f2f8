#include "bench/endurance_api.h"

#include <functional>

#include "bench/api_streams.h"
#include "bench/endurance.h"

namespace sf::bench {

using nlohmann::json;

namespace {

constexpr int k_seed = 1234;  // the same seeded sampling as chat_body

std::string joined(const stream_result &s) {
    std::string t;
    for (const auto &p : s.pieces) t += p;
    return t;
}

// A call's arguments as an object ({} when malformed: what goes back into the history).
json arguments_object(const stream_result &s, bool valid) {
    json a = valid ? json::parse(s.tool_arguments, nullptr, false) : json::object();
    return a.is_object() ? a : json::object();
}

// endurance_tools() in another API's shape: `shape` maps each OpenAI `function` object.
json tools_as(const std::function<json(const json &)> &shape) {
    json out = json::array();
    for (const auto &t : endurance_tools()) out.push_back(shape(t["function"]));
    return out;
}

// The opening messages: the system prompt, then the user's task.
json system_and_task(const std::string &system, const std::string &task) {
    return json::array(
        {{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", task}}});
}

// An answer without a call: its text as the assistant's, then the result in a user nudge.
void append_no_call(json &list, const stream_result &s, const std::string &result) {
    const std::string text = joined(s);
    list.push_back({{"role", "assistant"}, {"content", text.empty() ? "(no answer)" : text}});
    list.push_back({{"role", "user"}, {"content", "No tool was called. " + result}});
}

std::string call_id(const stream_result &s, const char *prefix, int turn) {
    return s.tool_call_id.empty() ? prefix + std::to_string(turn) : s.tool_call_id;
}

// OpenAI chat completions: tool_choice "required" or {"type":"function","function":{name}}.
class openai_conversation : public endurance_conversation {
  public:
    openai_conversation(const std::string &system, const std::string &task)
        : messages_(system_and_task(system, task)) {}
    json request(const std::string &named, int max_tokens) const override {
        json body                   = chat_body(messages_, max_tokens);
        body["tools"]               = endurance_tools();
        body["tool_choice"]         = named.empty()
                                          ? json("required")
                                          : json{{"type", "function"}, {"function", {{"name", named}}}};
        body["parallel_tool_calls"] = false;  // one call a turn, as the schema check expects
        return body;
    }
    stream_result send(const std::string &base, const json &body,
                       const request_options &opts) const override {
        return post_chat_stream(base, body, opts);
    }
    void append(const stream_result &s, bool valid, const std::string &problem, int turn,
                const std::string &result) override {
        if (s.tool_name.empty()) return append_no_call(messages_, s, result);
        const std::string id = call_id(s, "call_", turn);
        json call            = {
                       {"id", id},
                       {"type", "function"},
                       {"function", {{"name", s.tool_name}, {"arguments", valid ? s.tool_arguments : "{}"}}}};
        messages_.push_back(
            {{"role", "assistant"}, {"content", ""}, {"tool_calls", json::array({call})}});
        messages_.push_back({{"role", "tool"},
                             {"tool_call_id", id},
                             {"content", result_text(valid, problem, result)}});
    }

  private:
    json messages_;
};

// Anthropic Messages: tool_choice {"type":"any"} or {"type":"tool","name"}, parallel use
// disabled; tool_use blocks answered by tool_result blocks in the next user message.
class anthropic_conversation : public endurance_conversation {
  public:
    anthropic_conversation(const std::string &system, const std::string &task)
        : system_(system),
          messages_(json::array({{{"role", "user"}, {"content", task}}})),
          tools_(tools_as([](const json &f) {
              return json{{"name", f["name"]},
                          {"description", f["description"]},
                          {"input_schema", f["parameters"]}};
          })) {}
    json request(const std::string &named, int max_tokens) const override {
        json choice =
            named.empty() ? json{{"type", "any"}} : json{{"type", "tool"}, {"name", named}};
        choice["disable_parallel_tool_use"] = true;
        return {{"model", "bench"},   {"system", system_},     {"messages", messages_},
                {"tools", tools_},    {"tool_choice", choice}, {"max_tokens", max_tokens},
                {"temperature", 1.0}, {"top_k", 40},           {"seed", k_seed},
                {"stream", true}};
    }
    stream_result send(const std::string &base, const json &body,
                       const request_options &opts) const override {
        return post_stream(base, "/v1/messages", body, opts, reader_of<anthropic_reader>());
    }
    // Anthropic sessions replay as Anthropic's own typed events (issue #39).
    stream_result reattach(const std::string &base, const std::string &session,
                           const request_options &opts) const override {
        return get_stream(base, "/v1/sessions/" + session + "/events", opts,
                          reader_of<anthropic_reader>());
    }
    void append(const stream_result &s, bool valid, const std::string &problem, int turn,
                const std::string &result) override {
        if (s.tool_name.empty()) return append_no_call(messages_, s, result);
        const std::string id = call_id(s, "toolu_", turn);
        messages_.push_back({{"role", "assistant"},
                             {"content", json::array({{{"type", "tool_use"},
                                                       {"id", id},
                                                       {"name", s.tool_name},
                                                       {"input", arguments_object(s, valid)}}})}});
        json block = {{"type", "tool_result"},
                      {"tool_use_id", id},
                      {"content", result_text(valid, problem, result)}};
        if (!valid) block["is_error"] = true;
        messages_.push_back({{"role", "user"}, {"content", json::array({block})}});
    }

  private:
    std::string system_;
    json messages_, tools_;
};

// OpenAI Responses: function tools, tool_choice "required" or {"type":"function","name"};
// function_call items answered by function_call_output items. Re-attaches natively: GET
// /v1/responses/{id}?stream=true replays the response's events from the first.
class responses_conversation : public endurance_conversation {
  public:
    responses_conversation(const std::string &system, const std::string &task)
        : system_(system),
          input_(json::array({{{"role", "user"}, {"content", task}}})),
          tools_(tools_as([](const json &f) {
              return json{{"type", "function"},
                          {"name", f["name"]},
                          {"description", f["description"]},
                          {"parameters", f["parameters"]}};
          })) {}
    json request(const std::string &named, int max_tokens) const override {
        json choice =
            named.empty() ? json("required") : json{{"type", "function"}, {"name", named}};
        return {{"model", "bench"},
                {"instructions", system_},
                {"input", input_},
                {"tools", tools_},
                {"tool_choice", choice},
                {"parallel_tool_calls", false},
                {"max_output_tokens", max_tokens},
                {"temperature", 1.0},
                {"top_p", 1.0},
                {"top_k", 40},
                {"seed", k_seed},
                {"stream", true}};
    }
    stream_result send(const std::string &base, const json &body,
                       const request_options &opts) const override {
        return post_stream(base, "/v1/responses", body, opts, reader_of<responses_reader>());
    }
    stream_result reattach(const std::string &base, const std::string &session,
                           const request_options &opts) const override {
        return get_stream(base, "/v1/responses/resp_" + session + "?stream=true", opts,
                          reader_of<responses_reader>());
    }
    void append(const stream_result &s, bool valid, const std::string &problem, int turn,
                const std::string &result) override {
        if (s.tool_name.empty()) return append_no_call(input_, s, result);
        const std::string id = call_id(s, "call_", turn);
        input_.push_back({{"type", "function_call"},
                          {"call_id", id},
                          {"name", s.tool_name},
                          {"arguments", valid ? s.tool_arguments : "{}"}});
        input_.push_back({{"type", "function_call_output"},
                          {"call_id", id},
                          {"output", result_text(valid, problem, result)}});
    }

  private:
    std::string system_;
    json input_, tools_;
};

// Ollama /api/chat: the tools are listed, but Ollama has no tool_choice; the call is forced by
// `format`, a JSON schema of the call itself ({"name": the tool, "arguments": its parameters},
// any of the tools or the named one), so the answer is that JSON as content. A server that
// answers with message.tool_calls instead is read as well.
class ollama_conversation : public endurance_conversation {
  public:
    ollama_conversation(const std::string &system, const std::string &task)
        : messages_(system_and_task(system, task)) {}
    json request(const std::string &named, int max_tokens) const override {
        json shapes = json::array();
        for (const auto &t : endurance_tools()) {
            const json &f = t["function"];
            if (!named.empty() && f["name"] != named) continue;
            shapes.push_back(
                {{"type", "object"},
                 {"properties", {{"name", {{"const", f["name"]}}}, {"arguments", f["parameters"]}}},
                 {"required", {"name", "arguments"}},
                 {"additionalProperties", false}});
        }
        json format = shapes.size() == 1 ? shapes[0] : json{{"anyOf", shapes}};
        return {{"model", "bench"},
                {"messages", messages_},
                {"tools", endurance_tools()},
                {"format", format},
                {"stream", true},
                {"options",
                 {{"num_predict", max_tokens},
                  {"temperature", 1.0},
                  {"top_k", 40},
                  {"top_p", 1.0},
                  {"seed", k_seed}}}};
    }
    stream_result send(const std::string &base, const json &body,
                       const request_options &opts) const override {
        return post_stream(base, "/api/chat", body, opts, reader_of<ollama_reader>());
    }
    // Ollama sessions replay as Ollama's own NDJSON lines (issue #39).
    stream_result reattach(const std::string &base, const std::string &session,
                           const request_options &opts) const override {
        return get_stream(base, "/v1/sessions/" + session + "/events", opts,
                          reader_of<ollama_reader>());
    }
    void normalize(stream_result &s) override {
        if (s.tool_calls > 0 || s.finish_reason == "length") return;
        const json c = json::parse(joined(s), nullptr, false);
        if (!c.is_object() || !c.contains("name") || !c["name"].is_string() ||
            !c.contains("arguments"))
            return;
        s.tool_calls     = 1;
        s.tool_name      = c["name"].get<std::string>();
        s.tool_arguments = c["arguments"].dump();
        content_call_    = true;
    }
    void append(const stream_result &s, bool valid, const std::string &problem, int,
                const std::string &result) override {
        if (s.tool_name.empty()) return append_no_call(messages_, s, result);
        if (content_call_) {
            // The schema-forced answer goes back as the model wrote it, as a client of
            // `format` keeps it.
            messages_.push_back({{"role", "assistant"}, {"content", joined(s)}});
        } else {
            json call = {
                {"function", {{"name", s.tool_name}, {"arguments", arguments_object(s, valid)}}}};
            messages_.push_back(
                {{"role", "assistant"}, {"content", ""}, {"tool_calls", json::array({call})}});
        }
        content_call_ = false;
        messages_.push_back({{"role", "tool"},
                             {"tool_name", s.tool_name},
                             {"content", result_text(valid, problem, result)}});
    }

  private:
    json messages_;
    bool content_call_ = false;  // the last answer's call came as JSON content
};

}  // namespace

stream_result endurance_conversation::reattach(const std::string &base_url,
                                               const std::string &session,
                                               const request_options &opts) const {
    return get_session_stream(base_url, session, opts);
}

std::string endurance_conversation::result_text(bool valid, const std::string &problem,
                                                const std::string &result) {
    return valid ? result : "error: invalid arguments (" + problem + "). " + result;
}

bool known_api(const std::string &api) {
    return api == "openai" || api == "anthropic" || api == "responses" || api == "ollama";
}

std::unique_ptr<endurance_conversation> make_conversation(const std::string &api,
                                                          const std::string &system,
                                                          const std::string &task) {
    if (api == "anthropic") return std::make_unique<anthropic_conversation>(system, task);
    if (api == "responses") return std::make_unique<responses_conversation>(system, task);
    if (api == "ollama") return std::make_unique<ollama_conversation>(system, task);
    return std::make_unique<openai_conversation>(system, task);
}

}  // namespace sf::bench
