#include "engine/llama/chat_render.h"
#include "engine/llama/render_memo.h"
#include "engine/llama/thread_local_time.h"

#include <chat.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <stdexcept>

namespace sf {

// A tool call's arguments as a JSON object's text. llama.cpp's chat layer parses them before
// the template renders (it throws on anything else), but a client may send back what this
// server emitted: a call cut by max_tokens ('{"path": "ab'), or a bare value. Those are kept
// whole as {"arguments": "<text>"}: accepted, and rendered as the model can read them.
static std::string object_arguments(const std::string &text) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return "{}";
    const auto j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (j.is_object()) return text;
    return nlohmann::ordered_json{{"arguments", text}}.dump();
}

common_chat_msg to_common(const chat_message &m) {
    common_chat_msg cm;
    cm.role              = m.role;
    cm.content           = m.content;
    cm.reasoning_content = m.reasoning_content;
    cm.tool_call_id      = m.tool_call_id;
    cm.tool_name         = m.name;
    for (const auto &tc : m.tool_calls)
        cm.tool_calls.push_back({tc.name, object_arguments(tc.arguments), tc.id});
    return cm;
}

namespace {

common_chat_tool_choice to_common(tool_choice_mode m) {
    switch (m) {
        case tool_choice_mode::NONE:
            return COMMON_CHAT_TOOL_CHOICE_NONE;
        case tool_choice_mode::REQUIRED:
        case tool_choice_mode::NAMED:
            return COMMON_CHAT_TOOL_CHOICE_REQUIRED;
        default:
            return COMMON_CHAT_TOOL_CHOICE_AUTO;
    }
}

// llama.cpp's tool grammars let free content precede the calls even when a call is required
// (`root ::= … until-N? tool-calls`). A forced call (OpenAI required/named, Anthropic any/tool)
// starts right away here, as Anthropic documents for forced tool use: drop that allowance.
void drop_content_before_tools(std::string &grammar) {
    static const std::regex root_rule(R"((^|\n)root ::= [^\n]*)");
    static const std::regex until_before_calls(R"( until-[0-9]+\? (tool-calls?)\b)");
    std::smatch m;
    if (!std::regex_search(grammar, m, root_rule)) return;
    const std::string fixed = std::regex_replace(m.str(), until_before_calls, " $1");
    grammar.replace(static_cast<size_t>(m.position()), static_cast<size_t>(m.length()), fixed);
}

// llama.cpp's JSON-native tool grammar repeats calls (`tool-calls ::= (… space)+`) even when
// parallel_tool_calls is false; without parallel calls the answer holds exactly one.
void limit_to_one_call(std::string &grammar) {
    static const std::regex repeated(R"((^|\n)tool-calls ::= \((.*) space\)\+(\n|$))");
    grammar = std::regex_replace(grammar, repeated, "$1tool-calls ::= $2 space$3");
}

// llama.cpp's template application calls std::localtime (the templates' date variables), which
// fills one static struct tm per process, and Submit and Render render on gRPC threads at once.
// The program's localtime is thread-safe (thread_local_time.h), so applications run in
// parallel: no process-wide lock, and one request's large schema or template, rendered and
// turned into a grammar here, holds up no other request (issue #38 item 4: a 57.8 s grammar
// build once delayed a 4-token request by 23.9 s under the lock that was here).
common_chat_params apply_template(const common_chat_templates *templates,
                                  const common_chat_templates_inputs &in) {
    use_thread_local_time();
    return common_chat_templates_apply(templates, in);
}

}  // namespace

chat_render_result render_chat_template(const common_chat_templates *templates,
                                        const std::vector<chat_message> &messages,
                                        bool add_generation_prompt, const chat_options &opt,
                                        bool memo) {
    common_chat_templates_inputs in;
    in.use_jinja             = true;
    in.add_generation_prompt = add_generation_prompt;
    for (const auto &m : messages) in.messages.push_back(to_common(m));
    for (const auto &t : opt.tools) in.tools.push_back({t.name, t.description, t.parameters});
    in.tool_choice         = to_common(opt.tool_choice);
    in.parallel_tool_calls = opt.parallel_tool_calls;
    in.json_schema         = opt.json_schema;
    // Reasoning is always split from the content (OpenAI reasoning_content, Anthropic thinking).
    in.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;
    for (const auto &[k, v] : opt.template_kwargs) in.chat_template_kwargs[k] = v;
    // As llama-server: the enable_thinking kwarg decides, then reasoning on/off, then effort.
    auto kw = in.chat_template_kwargs.find("enable_thinking");
    if (kw != in.chat_template_kwargs.end()) {
        if (kw->second != "true" && kw->second != "false")
            throw std::invalid_argument("chat_template_kwargs.enable_thinking must be a boolean");
        in.enable_thinking = kw->second == "true";
    }
    if (opt.reasoning >= 0) {
        in.enable_thinking                         = opt.reasoning == 1;
        in.chat_template_kwargs["enable_thinking"] = in.enable_thinking ? "true" : "false";
    }
    if (!opt.reasoning_effort.empty())
        in.chat_template_kwargs["reasoning_effort"] = "\"" + opt.reasoning_effort + "\"";
    const bool force_call =
        opt.tool_choice == tool_choice_mode::REQUIRED || opt.tool_choice == tool_choice_mode::NAMED;
    const bool forced = force_call || !opt.json_schema.empty();
    // A forced shape (tool call, schema) turns the template's default reasoning off; reasoning
    // asked for explicitly stays on (the grammar then allows a reasoning block first).
    if (forced && opt.reasoning < 0 && kw == in.chat_template_kwargs.end()) {
        in.enable_thinking                         = false;
        in.chat_template_kwargs["enable_thinking"] = "false";
    }

    const common_chat_params p =
        memo ? memo_render(templates, in, apply_template) : apply_template(templates, in);
    chat_render_result out;
    out.prompt      = p.prompt;
    out.extra_stops = p.additional_stops;

    common_chat_params g = p;  // where grammar and parser come from
    if (opt.tool_choice == tool_choice_mode::NAMED) {
        common_chat_templates_inputs named = in;
        named.tools.clear();
        for (const auto &t : in.tools) {
            if (t.name == opt.tool_name) named.tools.push_back(t);
        }
        if (named.tools.empty())
            throw std::invalid_argument("tool_choice names '" + opt.tool_name +
                                        "', which is not among the tools");
        g = apply_template(templates, named);
    }
    if (forced && g.grammar.empty())
        throw std::invalid_argument(
            "this model's chat template cannot constrain the output (no grammar for its format)");

    auto &c   = out.constraint;
    c.grammar = g.grammar;
    if (force_call) drop_content_before_tools(c.grammar);
    if (!opt.parallel_tool_calls) limit_to_one_call(c.grammar);
    c.lazy              = g.grammar_lazy;
    c.preserved_tokens  = g.preserved_tokens;
    c.generation_prompt = g.generation_prompt;
    for (const auto &t : g.grammar_triggers)
        c.triggers.push_back({static_cast<int>(t.type), t.value});
    if (g.supports_thinking && !g.thinking_end_tags.empty()) {
        c.thinking_start   = g.thinking_start_tag;
        c.thinking_end     = g.thinking_end_tags;
        c.reasoning_budget = opt.reasoning_budget;
    }

    auto &ps             = out.parse;
    ps.format            = static_cast<int32_t>(g.format);
    ps.parser            = g.parser;
    ps.generation_prompt = g.generation_prompt;
    ps.thinking          = g.supports_thinking && in.enable_thinking;
    ps.parse_tool_calls  = !opt.tools.empty() && opt.tool_choice != tool_choice_mode::NONE;
    return out;
}

}  // namespace sf
