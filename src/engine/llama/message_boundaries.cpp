#include "engine/llama/message_boundaries.h"

#include <chat.h>
#include <common.h>

#include <algorithm>

#include "engine/llama/chat_render.h"

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
// The messages whose ends are boundaries (the system prompt's, the last 9 others'), each with
// its memo key: messages[0..k], unambiguously.
std::vector<std::pair<size_t, std::string>> message_boundary_finder::keys(
    const std::vector<chat_message> &messages, const chat_options &options) {
    std::vector<std::pair<size_t, std::string>> out;
    const size_t n = messages.size();
    // What else the template renders: the tools (in the system block) and its kwargs.
    std::string key = "tools";
    for (const auto &t : options.tools)
        for (const std::string *f : {&t.name, &t.description, &t.parameters})
            key += std::to_string(f->size()) + ':' + *f;
    key += "r" + std::to_string(options.reasoning) + options.reasoning_effort;
    for (const auto &[name, value] : options.template_kwargs) key += name + '=' + value + ';';
    key += '|';
    for (size_t k = 0; k < n; ++k) {
        const auto &m = messages[k];
        for (const std::string *f :
             {&m.role, &m.content, &m.name, &m.tool_call_id, &m.reasoning_content}) {
            key += std::to_string(f->size()) + ':' + *f;
        }
        for (const auto &c : m.tool_calls)
            key += "call" + std::to_string(c.id.size()) + ':' + c.id +
                   std::to_string(c.name.size()) + ':' + c.name +
                   std::to_string(c.arguments.size()) + ':' + c.arguments;
        key += '|';
        if (k == 0 || k + 9 >= n) out.emplace_back(k, key);
    }
    return out;
}

// messages[0..k] and a placeholder user message, rendered without a generation prompt and with
// the request's tools and template options (the prompt's system block holds the tools: without
// them every boundary of a request with tools fell where the tools begin, and a hybrid model's
// agent turns restored only the system prompt); memoized by `key` (those messages and options).
// False when the template refuses the shape (e.g. strict alternation).
bool message_boundary_finder::render(const std::vector<chat_message> &messages, size_t k,
                                     const chat_options &options, const std::string &key,
                                     std::string &text) const {
    {
        std::lock_guard lk(mu_);
        auto it = renders_.find(key);
        if (it != renders_.end()) {
            it->second.second = ++clock_;
            text              = it->second.first;
            return true;
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
    try {
        text = render_chat_template(templates_, head, false, prompt_only).prompt;
    } catch (const std::exception &) {
        return false;
    }
    constexpr size_t k_kept = 64;
    std::lock_guard lk(mu_);
    if (renders_.size() >= k_kept) {
        auto oldest = renders_.begin();
        for (auto it = renders_.begin(); it != renders_.end(); ++it)
            if (it->second.second < oldest->second.second) oldest = it;
        renders_.erase(oldest);
    }
    renders_[key] = {text, ++clock_};
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
