#include "engine/llama/render_memo.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <list>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

namespace sf {

namespace {

constexpr size_t k_keys = 16;  // a few system prompts and tool sets at once
// Keys longer than this are not kept (a long conversation is a new key every turn anyway).
constexpr size_t k_max_key = size_t(1) << 20;

struct memo_entry {
    std::string key;
    bool exact = false;         // the marked rendering reproduces the full one
    common_chat_params params;  // with the marks in the prompt
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

// User messages and tool results of plain inert text: what changes between requests that share
// a system prompt, tools and history (the new question, an edited message, a tool's output).
bool markable(const common_chat_msg &m) {
    return m.content_parts.empty() && m.tool_calls.empty() && m.reasoning_content.empty() &&
           marked_content(m.role, m.content);
}

// Everything the template sees, marked contents as their marks; "" when not memoizable (no
// message is marked, or the key is too long).
std::string key_of(const common_chat_templates *t, const common_chat_templates_inputs &in) {
    if (std::none_of(in.messages.begin(), in.messages.end(), markable)) return {};
    std::string key = std::to_string(reinterpret_cast<uintptr_t>(t));
    // Templates may print today's date (strftime_now, date_string).
    char day[16];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(day, sizeof day, "%Y-%m-%d", &tm);
    add_key_field(key, day);
    add_key_field(key, common_chat_tools_to_json_oaicompat(in.tools).dump());
    add_key_field(key, std::to_string(static_cast<int>(in.tool_choice)));
    add_key_field(key, in.json_schema);
    add_key_field(key, in.grammar);
    add_key_field(key, std::to_string(in.add_generation_prompt) + std::to_string(in.use_jinja) +
                           std::to_string(in.parallel_tool_calls) +
                           std::to_string(in.enable_thinking) +
                           std::to_string(static_cast<int>(in.reasoning_format)) +
                           std::to_string(static_cast<int>(in.continue_final_message)) +
                           std::to_string(in.add_bos) + std::to_string(in.add_eos));
    for (const auto &[k, v] : in.chat_template_kwargs) add_key_field(key, k), add_key_field(key, v);
    for (size_t i = 0; i < in.messages.size(); ++i) {
        const auto &m = in.messages[i];
        add_key_field(key, m.role);
        add_key_field(key, markable(m) ? content_mark(i) : m.content);
        add_key_field(key, m.reasoning_content);
        add_key_field(key, m.tool_name);
        add_key_field(key, m.tool_call_id);
        for (const auto &p : m.content_parts)
            add_key_field(key, p.type), add_key_field(key, p.text);
        for (const auto &c : m.tool_calls)
            add_key_field(key, c.name), add_key_field(key, c.arguments), add_key_field(key, c.id);
    }
    return key.size() <= k_max_key ? key : std::string();
}

// Puts each marked message's content in place of its mark; false when a mark is not there
// exactly once.
bool put_back(std::string &prompt, const std::vector<common_chat_msg> &messages) {
    for (size_t i = 0; i < messages.size(); ++i) {
        if (!markable(messages[i])) continue;
        const std::string m = content_mark(i);
        const size_t at     = prompt.find(m);
        if (at == std::string::npos || prompt.find(m, at + m.size()) != std::string::npos)
            return false;
        prompt.replace(at, m.size(), messages[i].content);
    }
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

bool inert_content(std::string_view s) {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s.front())) ||
        std::isspace(static_cast<unsigned char>(s.back())))
        return false;
    return s.find_first_of("<>[]{}|\\/\x1e") == std::string_view::npos;
}

bool marked_content(std::string_view role, std::string_view content) {
    return (role == "user" || role == "tool") && inert_content(content);
}

// 0x1e never occurs in inert content, so a mark cannot collide with real text.
std::string content_mark(size_t i) {
    return "\x1esf-message-" + std::to_string(i) + "\x1e";
}

void add_key_field(std::string &key, std::string_view v) {
    key += std::to_string(v.size());
    key += ':';
    key += v;
}

common_chat_params memo_render(const common_chat_templates *templates,
                               const common_chat_templates_inputs &in,
                               const template_apply &apply) {
    const std::string key = key_of(templates, in);
    if (key.empty()) return apply(templates, in);
    auto &st = state();
    // The lock covers the list only: a render (apply) never runs under it, so one request's
    // template does not hold up another's.
    std::optional<common_chat_params> memo;  // an exact entry's parameters
    bool known = false;
    {
        std::lock_guard lk(st.mu);
        for (auto it = st.entries.begin(); it != st.entries.end(); ++it) {
            if (it->key != key) continue;
            st.entries.splice(st.entries.begin(), st.entries, it);
            known = true;
            if (it->exact) memo = it->params;
            break;
        }
    }
    if (known) {
        if (memo && put_back(memo->prompt, in.messages)) {
            st.hits.fetch_add(1, std::memory_order_relaxed);
            return std::move(*memo);
        }
        return apply(templates, in);
    }
    // First request of this key: render both ways and compare.
    common_chat_templates_inputs with_marks = in;
    for (size_t i = 0; i < with_marks.messages.size(); ++i)
        if (markable(in.messages[i])) with_marks.messages[i].content = content_mark(i);
    memo_entry e;
    e.key                   = key;
    e.params                = apply(templates, with_marks);
    common_chat_params mine = e.params;
    common_chat_params full = apply(templates, in);
    e.exact                 = put_back(mine.prompt, in.messages) && same(mine, full);
    std::lock_guard lk(st.mu);
    st.entries.push_front(std::move(e));
    if (st.entries.size() > k_keys) st.entries.pop_back();
    return full;
}

uint64_t memo_render_hits() {
    return state().hits.load(std::memory_order_relaxed);
}

}  // namespace sf
