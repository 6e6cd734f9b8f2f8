// Where the messages of a rendered conversation end, in tokens: the snapshot points of the
// prefix cache on models whose state cannot be cut back (recurrent, hybrid), through
// engine_i::message_boundaries. Each boundary is found by rendering the conversation's first
// messages plus a placeholder with the model's template and comparing texts; the renderings
// are memoized, because agents resend the same system prompt and history with every request,
// with the inert contents of user messages and tool results as marks (a new question or an
// edited message then meets its key again; see message_boundaries.cpp).
//
// Threads: find() runs on the worker's request threads, concurrently; the memo has its own
// mutex. The templates and vocabulary belong to the engine and outlive this object.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"

struct common_chat_templates;
struct llama_vocab;

namespace sf {

/** Message ends of a rendered conversation, in tokens (see the file comment). */
class message_boundary_finder {
  public:
    /** `templates` and `vocab` are the engine's, and must outlive this finder. */
    message_boundary_finder(const common_chat_templates *templates, const llama_vocab *vocab)
        : templates_(templates), vocab_(vocab) {}

    /**
     * Token offsets in `prompt` (rendered from `messages` and `options`) where the system prompt
     * and each of the last 9 messages end, sorted and unique, each in (0, tokens.size()).
     * Empty when the tokens do not spell the text (no reliable mapping) or there is one message.
     */
    std::vector<int32_t> find(const std::vector<chat_message> &messages,
                              const chat_options &options, const rendered_prompt &prompt) const;

    /** Renderings taken from the memo since construction (tests). */
    uint64_t memo_hits() const {
        std::lock_guard lk(mu_);
        return hits_;
    }

  private:
    static std::vector<std::pair<size_t, std::string>> keys(
        const std::vector<chat_message> &messages, const chat_options &options);
    bool render(const std::vector<chat_message> &messages, size_t k, const chat_options &options,
                const std::string &key, std::string &text) const;

    const common_chat_templates *templates_;
    const llama_vocab *vocab_;
    mutable std::mutex mu_;
    struct memo_entry {
        std::string text;     // the rendering, marked contents as their marks
        bool exact   = true;  // false: putting the contents back was not the real rendering
        uint64_t use = 0;     // clock_ at the last use (the least recent goes first)
    };
    mutable std::map<std::string, memo_entry> renders_;  // key → rendering
    mutable uint64_t clock_ = 0;
    mutable uint64_t hits_  = 0;
};

}  // namespace sf
