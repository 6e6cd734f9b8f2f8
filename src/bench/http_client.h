// The bench's HTTP client: one streamed OpenAI chat request, every SSE chunk timestamped.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sf::bench {

/** Seconds on the steady clock (the bench's one time base). */
double now_s();

/** The outcome of one streamed request; times are seconds since the request was sent. */
struct stream_result {
    int status = 0;      // HTTP status (0: no response)
    bool ok    = false;  // 200, `[DONE]` seen, no in-band error
    bool done  = false;  // `data: [DONE]` arrived
    bool cut   = false;  // the stream ended early: transport error, in-band error or no [DONE]
    std::string error;
    double sent_at = 0;               // now_s() when sent
    double ttft_s  = -1;              // first content chunk (-1: none)
    double total_s = 0;               // until the response ended
    std::vector<double> token_times;  // one per content chunk (≈ one per token)
    std::vector<std::string> pieces;  // the content of each chunk
    int prompt_tokens     = -1;       // usage.prompt_tokens (or timings)
    int cached_tokens     = -1;  // usage.prompt_tokens_details.cached_tokens or timings.cache_n
    int completion_tokens = -1;  // usage.completion_tokens (-1: none reported)
    std::string finish_reason;   // choices[0].finish_reason of the last chunk that had one
    std::string tool_name;       // the first tool call's function name (delta.tool_calls[0])
    std::string tool_call_id;    // its id, as the server named it
    std::string tool_arguments;  // its arguments, the streamed pieces concatenated
    int tool_calls = 0;          // distinct tool calls seen (by index)
    std::string session;         // the X-Superfluid-Session response header ("" elsewhere)

    /** Completion tokens: the usage figure, else the chunk count. */
    int tokens() const {
        return completion_tokens >= 0 ? completion_tokens : static_cast<int>(pieces.size());
    }
};

/** Per-request knobs. */
struct request_options {
    std::string priority;  // "batch"/"interactive": body field + X-Superfluid-Priority header
    double timeout_s = 900;
    /** Called in the receiving thread after each content chunk (count so far, its time). */
    std::function<void(int, double)> on_token;
    /** Superfluid: `X-Superfluid-Detach: true`, the session outlives a client that goes away. */
    bool detach = false;
    /** > 0: the client drops the connection after this many token events (an interruption). */
    int cut_after_tokens = 0;
};

/** Normalizes a server address: "http://host:port" without a trailing "/v1" or "/". */
std::string normalize_base_url(std::string url);

/** POSTs `body` (made streaming, with usage) to BASE/v1/chat/completions and reads the stream. */
stream_result post_chat_stream(const std::string &base_url, nlohmann::json body,
                               const request_options &opts);

/**
 * Re-attaches to a Superfluid session: GET BASE/v1/sessions/ID/events?include_usage=true, the
 * whole answer replayed from the journal then followed live, read like a chat stream.
 */
stream_result get_session_stream(const std::string &base_url, const std::string &session,
                                 const request_options &opts);

/** GET BASE+path: the status (0 when unreachable), the body in `*body` when given. */
int http_get(const std::string &base_url, const std::string &path, double timeout_s,
             std::string *body = nullptr);

/**
 * Asks BASE/v1/models for the served model's id and remembers it: later requests to BASE name
 * it (Superfluid refuses other names). Returns the id ("" when none).
 */
std::string discover_model(const std::string &base_url);

/** A chat request body: seeded sampling (deterministic per request), `max_tokens`. */
nlohmann::json chat_body(nlohmann::json messages, int max_tokens);

/**
 * Incremental SSE parser over the bytes of an OpenAI chat stream (exposed for tests). A token
 * event is a chunk with content, reasoning or tool-call arguments.
 */
class sse_reader {
  public:
    explicit sse_reader(stream_result &out) : out_(out) {}
    /** Feeds bytes received at `t` (seconds since sent). */
    void feed(const char *data, size_t len, double t);

  private:
    void line(const std::string &l, double t);
    void delta(const nlohmann::json &d, double t);
    stream_result &out_;
    std::string buf_;
};

}  // namespace sf::bench
