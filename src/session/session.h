// One request's life on the head: the token events received from the worker, in order,
// and how it finished. A pump thread appends; any number of readers (HTTP streams) follow
// with their own cursor. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/chat.h"
#include "core/session_event.h"

namespace sf {

class session {
  public:
    session(std::string id, std::string model, int32_t prompt_tokens, int32_t cached_tokens)
        : id_(std::move(id)),
          model_(std::move(model)),
          prompt_tokens_(prompt_tokens),
          cached_tokens_(cached_tokens) {}

    /** Class and start time, for /api/ps and the latency metrics. */
    void set_origin(priority_class cls, std::chrono::steady_clock::time_point started) {
        cls_     = cls;
        started_ = started;
    }
    priority_class cls() const { return cls_; }
    /**
     * Which API adapter started it ("openai.chat", "openai.completion", …) and its creation
     * time in unix seconds: what a re-attached stream needs to speak the same format.
     */
    void set_api(std::string api, int64_t created_unix) {
        api_          = std::move(api);
        created_unix_ = created_unix;
    }
    const std::string &api() const { return api_; }
    /** The adapter's journaled data (generate_request::client_meta); set before sharing. */
    void set_client_meta(std::string m) { client_meta_ = std::move(m); }
    const std::string &client_meta() const { return client_meta_; }
    /** The client's User-Agent (generate_request::user_agent); set before sharing. */
    void set_user_agent(std::string ua) { user_agent_ = std::move(ua); }
    const std::string &user_agent() const { return user_agent_; }
    /**
     * Who made it (generate_request::client: "key:…" for a request with an API key, see
     * api/common/client_identity.h); "" when unknown. Set before sharing.
     */
    void set_client(std::string c) { client_ = std::move(c); }
    const std::string &client() const { return client_; }
    int64_t created_unix() const { return created_unix_; }
    /** How to parse the answer (chat requests; from the worker's accepted event). */
    void set_parse_spec(chat_parse_spec spec) { parse_ = std::move(spec); }
    const chat_parse_spec &parse_spec() const { return parse_; }
    std::chrono::steady_clock::time_point started() const { return started_; }
    /**
     * Seconds from start() to the first token reaching this session (as its readers see it,
     * after the journal); negative before the first token.
     */
    double ttft_s() const;
    /** Token events received so far. */
    size_t token_count() const;
    /** The ids of the tokens received so far, in index order (a resume point). */
    std::vector<token_id> token_ids() const;
    /** True once cancel() was called (the client went away). */
    bool cancel_requested() const;

    const std::string &id() const { return id_; }
    const std::string &model() const { return model_; }
    int32_t prompt_tokens() const { return prompt_tokens_; }
    /**
     * Prompt tokens reused from the prefix cache: known once the first token arrived (the
     * worker sends it with that token), or the session finished; 0 before.
     */
    int32_t cached_tokens() const;
    /** The prompt's token ids, when the request asked for them (set before start() returns). */
    const std::vector<token_id> &prompt_token_ids() const { return prompt_token_ids_; }
    void set_prompt_token_ids(std::vector<token_id> ids) { prompt_token_ids_ = std::move(ids); }

    /** Appends a token event (pump thread). */
    void add_token(session_event ev);
    /** Records the end (pump thread); later calls are ignored. */
    void finish(session_event ev);

    /**
     * Copies token events from index `cursor` on into `out` (appending) and the finish
     * event if any; waits up to `timeout` when there is nothing new. Returns true when
     * something was copied.
     */
    bool read(size_t cursor, std::vector<session_event> &out,
              std::optional<session_event> &finished, std::chrono::milliseconds timeout) const;
    bool finished() const;
    /** Waits until at least `n` tokens were added or the session finished (pump thread). */
    void wait_tokens(size_t n);
    /** Waits until the session finished. */
    void wait_finished();

    /** Asks the worker to stop generating (set by the session manager). */
    void set_canceller(std::function<void()> fn);
    void cancel();

  private:
    std::string id_;
    std::string model_;
    int32_t prompt_tokens_;
    int32_t cached_tokens_;
    std::vector<token_id> prompt_token_ids_;

    chat_parse_spec parse_;
    priority_class cls_                            = priority_class::NORMAL;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::string api_;
    std::string client_meta_;
    std::string user_agent_;
    std::string client_;
    int64_t created_unix_ = 0;
    mutable std::mutex mu_;
    mutable std::condition_variable cv_;  // readers wait on it (read() is const)
    std::vector<session_event> tokens_;
    std::chrono::steady_clock::time_point first_token_at_{};  // guarded by mu_
    std::optional<session_event> finished_;
    std::function<void()> canceller_;
    bool cancel_requested_ = false;
};

}  // namespace sf
