#include "engine/llama/render_memo.h"

#include <atomic>
#include <ctime>
#include <list>
#include <mutex>
#include <string_view>

namespace sf {

namespace {

constexpr std::string_view k_placeholder = "\x1esf-last-user-message\x1e";
constexpr size_t k_keys                  = 16;  // a few system prompts and tool sets at once
// Keys longer than this are not kept (a long conversation is a new key every turn anyway).
constexpr size_t k_max_key = size_t(1) << 20;

struct memo_entry {
    std::string key;
    bool exact = false;         // the placeholder rendering reproduces the full one
    common_chat_params params;  // with the placeholder in the prompt
};

struct memo_state {
    std::mutex mu;
    std::list<memo_entry> entries;  // most recently used first
    std::atomic<uint64_t> hits{0};
};

memo_state &state() {
    static auto *s = new memo_state;  // never destroyed: renders may run during exit
    return *s;
}

bool inert(const std::string &s) {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s.front())) ||
        std::isspace(static_cast<unsigned char>(s.back())))
        return false;
    return s.find_first_of("<>[]{}|\\/") == std::string::npos &&
           s.find(k_placeholder) == std::string::npos;
}

void add_field(std::string &key, std::string_view v) {
    key += std::to_string(v.size());
    key += ':';
    key += v;
}

// Everything the template sees but the last message's content; "" when not memoizable.
std::string key_of(const common_chat_templates *t, const common_chat_templates_inputs &in) {
    if (in.messages.empty()) return {};
    const auto &last = in.messages.back();
    if (last.role != "user" || !last.content_parts.empty() || !last.tool_calls.empty() ||
        !last.reasoning_content.empty() || !inert(last.content))
        return {};
    std::string key = std::to_string(reinterpret_cast<uintptr_t>(t));
    // Templates may print today's date (strftime_now, date_string).
    char day[16];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(day, sizeof day, "%Y-%m-%d", &tm);
    add_field(key, day);
    add_field(key, common_chat_tools_to_json_oaicompat(in.tools).dump());
    add_field(key, std::to_string(static_cast<int>(in.tool_choice)));
    add_field(key, in.json_schema);
    add_field(key, in.grammar);
    add_field(key, std::to_string(in.add_generation_prompt) + std::to_string(in.use_jinja) +
                       std::to_string(in.parallel_tool_calls) + std::to_string(in.enable_thinking) +
                       std::to_string(static_cast<int>(in.reasoning_format)) +
                       std::to_string(static_cast<int>(in.continue_final_message)) +
                       std::to_string(in.add_bos) + std::to_string(in.add_eos));
    for (const auto &[k, v] : in.chat_template_kwargs) add_field(key, k), add_field(key, v);
    for (size_t i = 0; i < in.messages.size(); ++i) {
        const auto &m = in.messages[i];
        add_field(key, m.role);
        add_field(key, i + 1 == in.messages.size() ? std::string_view() : m.content);
        add_field(key, m.reasoning_content);
        add_field(key, m.tool_name);
        add_field(key, m.tool_call_id);
        for (const auto &p : m.content_parts) add_field(key, p.type), add_field(key, p.text);
        for (const auto &c : m.tool_calls)
            add_field(key, c.name), add_field(key, c.arguments), add_field(key, c.id);
    }
    return key.size() <= k_max_key ? key : std::string();
}

// Puts `text` in place of the one placeholder; false when it is not there exactly once.
bool put_back(std::string &prompt, const std::string &text) {
    const size_t at = prompt.find(k_placeholder);
    if (at == std::string::npos ||
        prompt.find(k_placeholder, at + k_placeholder.size()) != std::string::npos)
        return false;
    prompt.replace(at, k_placeholder.size(), text);
    return true;
}

bool same(const common_chat_params &a, const common_chat_params &b) {
    return a.format == b.format && a.prompt == b.prompt && a.grammar == b.grammar &&
           a.grammar_lazy == b.grammar_lazy && a.generation_prompt == b.generation_prompt &&
           a.supports_thinking == b.supports_thinking &&
           a.thinking_start_tag == b.thinking_start_tag &&
           a.thinking_end_tags == b.thinking_end_tags && a.preserved_tokens == b.preserved_tokens &&
           a.additional_stops == b.additional_stops && a.parser == b.parser &&
           a.grammar_triggers.size() == b.grammar_triggers.size();
}

}  // namespace

common_chat_params memo_render(const common_chat_templates *templates,
                               const common_chat_templates_inputs &in,
                               const template_apply &apply) {
    const std::string key = key_of(templates, in);
    if (key.empty()) return apply(templates, in);
    const std::string &content = in.messages.back().content;
    auto &st                   = state();
    {
        std::lock_guard lk(st.mu);
        for (auto it = st.entries.begin(); it != st.entries.end(); ++it) {
            if (it->key != key) continue;
            st.entries.splice(st.entries.begin(), st.entries, it);
            if (!it->exact) return apply(templates, in);
            common_chat_params p = it->params;
            if (put_back(p.prompt, content)) {
                st.hits.fetch_add(1, std::memory_order_relaxed);
                return p;
            }
            return apply(templates, in);
        }
    }
    // First request of this key: render both ways and compare.
    common_chat_templates_inputs with_placeholder = in;
    with_placeholder.messages.back().content      = std::string(k_placeholder);
    memo_entry e;
    e.key                   = key;
    e.params                = apply(templates, with_placeholder);
    common_chat_params mine = e.params;
    common_chat_params full = apply(templates, in);
    e.exact                 = put_back(mine.prompt, content) && same(mine, full);
    std::lock_guard lk(st.mu);
    st.entries.push_front(std::move(e));
    if (st.entries.size() > k_keys) st.entries.pop_back();
    return full;
}

uint64_t memo_render_hits() {
    return state().hits.load(std::memory_order_relaxed);
}

}  // namespace sf
