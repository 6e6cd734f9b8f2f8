// One streamed chat turn against a running server's OpenAI chat completions endpoint, as
// `superfluid run` needs it: the conversation so far in, the answer's reasoning and content
// deltas out as they arrive (SSE), cancellable from another thread (Ctrl-C).
// Thread: the caller's; `cancel` may be set from a signal handler.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace sf::launch {

/** One message of the conversation (OpenAI roles: system, user, assistant). */
struct chat_line {
    std::string role;
    std::string content;
};

struct chat_turn_options {
    std::string host = "127.0.0.1";
    int port         = 8453;
    std::string model;                     // as the server lists it
    std::string priority = "interactive";  // X-Superfluid-Priority
    int think            = -1;             // -1: the model's default, 0: off, 1: on
    int max_tokens       = 0;              // most tokens of the answer; 0: the server's default
};

/** What became of a turn. */
struct chat_turn_result {
    bool ok        = false;  // the answer finished (any finish reason)
    bool cancelled = false;  // `cancel` stopped it
    std::string content;     // the answer's text so far
    std::string error;       // !ok && !cancelled: the server's message (or the transport's)
    std::string session;     // X-Superfluid-Session, when the server named one
};

/**
 * Sends `messages` (stream: true) and calls `on_reasoning` / `on_content` with each delta.
 * Returns when the answer finished, failed, or `cancel` became true (the connection is then
 * closed, so the server cancels the generation).
 */
chat_turn_result chat_turn(const chat_turn_options &o, const std::vector<chat_line> &messages,
                           const std::function<void(const std::string &)> &on_reasoning,
                           const std::function<void(const std::string &)> &on_content,
                           const std::atomic<bool> &cancel);

}  // namespace sf::launch
