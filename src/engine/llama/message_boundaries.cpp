#include "engine/llama/message_boundaries.h"

#include <chat.h>
#include <common.h>

#include <algorithm>

#include "engine/llama/chat_render.h"
#include "engine/llama/render_memo.h"

namespace sf {

// Renders messages[0..k] followed by a placeholder user message, and takes where it stops
// agreeing with the real rendering: the end of message k as any conversation continuing
// after it renders it (templates render the last message differently from earlier ones, so
// rendering messages[0..k] alone would not do). Then maps that byte offset to a token offset.
// Only the end of the system prompt and of the last 9 messages are computed: each costs a
// rendering, and older boundaries already had their turn as recent ones. The last message's end
// is the one the next turn needs: an agent's next request is this one plus the answer and a tool
// result, and the generation prompt after the last message renders differently once the answer
// follows it (Qwen3's empty think block), so the prompt's own end is not a prefix of it.
namespace {

// User messages and tool results whose content is inert are marked (render_memo.h): those are
// what changes between requests sharing a history (the new question, an edited message, the
// latest tool output), so a key without them is met again. Other contents stay in the key.
bool marked(const chat_message &m) {
    return marked_content(m.role, m.content);
}

}  // namespace

// The messages whose ends are boundaries (the system prompt's, the last 9 others'), each with
// its memo key: messages[0..k], unambiguously, marked contents as their marks.
std::vector<std::pair<size_t, std::string>> message_boundary_finder::keys(
    const std::vector<chat_message> &messages, const chat_options &options) {
    std::vector<std::pair<size_t, std::string>> out;
    const size_t n = messages.size();
    // What else the template renders: the tools (in the system block) and its kwargs.
    std::string key = "tools";
    for (const auto &t : options.tools)
        for (const std::string *f : {&t.name, &t.description, &t.parameters})
            add_key_field(key, *f);
    key += "r" + std::to_string(options.reasoning) + options.reasoning_effort;
    for (const auto &[name, value] : options.template_kwargs) key += name + '=' + value + ';';
    key += '|';
    for (size_t k = 0; k < n; ++k) {
        const auto &m = messages[k];
        add_key_field(key, m.role);
        add_key_field(key, marked(m) ? content_mark(k) : m.content);
        for (const std::string *f : {&m.name, &m.tool_call_id, &m.reasoning_content})
            add_key_field(key, *f);
        for (const auto &c : m.tool_calls) {
            key += "call";
            for (const std::string *f : {&c.id, &c.name, &c.arguments}) add_key_field(key, *f);
        }
        key += '|';
        if (k == 0 || k + 9 >= n) out.emplace_back(k, key);
    }
    return out;
}

// messages[0..k] and a placeholder user message, rendered without a generation prompt and with
// the request's tools and template options (the prompt's system block holds the tools: without
// them every boundary of a request with tools fell where the tools begin, and a hybrid model's
// agent turns restored only the system prompt). Memoized by `key` (those messages, marked
// contents as marks, and options): the memo holds the rendering with the marks, and the
// contents are put in their place. The first rendering of a key also renders the real
// messages and keeps the marked one only when putting the contents back gives exactly that
// text (as render_memo.h does for the last user message). False when the template refuses
// the shape (e.g. strict alternation).
bool message_boundary_finder::render(const std::vector<chat_message> &messages, size_t k,
                                     const chat_options &options, const std::string &key,
                                     std::string &text) const {
    std::vector<std::pair<std::string, const std::string *>> marks;  // mark → content
    for (size_t i = 0; i <= k; ++i)
        if (marked(messages[i])) marks.emplace_back(content_mark(i), &messages[i].content);
    const auto put_back = [&marks](std::string t, std::string &outv) {
        for (const auto &[m, content] : marks) {
            const size_t at = t.find(m);
            if (at == std::string::npos || t.find(m, at + m.size()) != std::string::npos)
                return false;
            t.replace(at, m.size(), *content);
        }
        outv = std::move(t);
        return true;
    };
    {
        std::lock_guard lk(mu_);
        auto it = renders_.find(key);
        if (it != renders_.end()) {
            it->second.use = ++clock_;
            if (it->second.exact && put_back(it->second.text, text)) {
                ++hits_;
                return true;
            }
            if (!it->second.exact) marks.clear();  // this shape needs the real contents
        }
    }
    std::vector<chat_message> head(messages.begin(), messages.begin() + static_cast<long>(k) + 1);
    chat_message placeholder;
    placeholder.role    = "user";
    placeholder.content = "\x07";
    head.push_back(placeholder);
    // The prompt's text only: no output constraint (a schema, a named tool's second pass).
    chat_options prompt_only = options;
    prompt_only.json_schema  = "";
    if (prompt_only.tool_choice != tool_choice_mode::NONE)
        prompt_only.tool_choice = tool_choice_mode::AUTO;
    prompt_only.tool_name = "";
    std::string with_marks;
    try {
        // Not through render_memo: these keys are rarely met again, and would evict prompts.
        text = render_chat_template(templates_, head, false, prompt_only, /*memo=*/false).prompt;
        if (!marks.empty()) {
            for (size_t i = 0; i <= k; ++i)
                if (marked(head[i])) head[i].content = content_mark(i);
            with_marks =
                render_chat_template(templates_, head, false, prompt_only, /*memo=*/false).prompt;
        }
    } catch (const std::exception &) {
        return false;
    }
    memo_entry e;
    e.use = 0;
    if (marks.empty()) {
        // Without marks the key holds every content: the text is exact, unless this is a key
        // whose marked rendering was not (then it stays so, and holds no text).
        e.exact = std::none_of(head.begin(), head.end() - 1, marked);
        if (e.exact) e.text = text;
    } else {
        std::string back;
        e.exact = put_back(with_marks, back) && back == text;
        e.text  = e.exact ? std::move(with_marks) : std::string();
    }
    constexpr size_t k_kept = 64;
    std::lock_guard lk(mu_);
    if (renders_.size() >= k_kept && !renders_.count(key)) {
        auto oldest = renders_.begin();
        for (auto it = renders_.begin(); it != renders_.end(); ++it)
            if (it->second.use < oldest->second.use) oldest = it;
        renders_.erase(oldest);
    }
    e.use         = ++clock_;
    renders_[key] = std::move(e);
    return true;
}

std::vector<int32_t> message_boundary_finder::find(const std::vector<chat_message> &messages,
                                                   const chat_options &options,
                                                   const rendered_prompt &prompt) const {
    std::vector<int32_t> out;
    if (messages.size() < 2 || prompt.text.empty()) return out;
    // Byte offset in the text where each token ends.
    std::vector<size_t> ends;
    std::string detok;
    for (token_id t : prompt.tokens) {
        detok += common_token_to_piece(vocab_, t, /*special=*/true);
        ends.push_back(detok.size());
    }
    if (detok.size() < prompt.text.size() ||
        detok.compare(detok.size() - prompt.text.size(), prompt.text.size(), prompt.text) != 0)
        return out;  // tokens do not spell the text: no reliable mapping
    const size_t shift = detok.size() - prompt.text.size();  // a BOS the text does not have
    for (const auto &[k, key] : keys(messages, options)) {
        std::string text;
        if (!render(messages, k, options, key, text)) continue;
        size_t lcp = 0;
        while (lcp < text.size() && lcp < prompt.text.size() && text[lcp] == prompt.text[lcp])
            ++lcp;
        // The last token that ends at or before the agreement point.
        auto it = std::upper_bound(ends.begin(), ends.end(), lcp + shift);
        auto t  = static_cast<int32_t>(it - ends.begin());
        if (t > 0 && t < static_cast<int32_t>(prompt.tokens.size())) out.push_back(t);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace sf
