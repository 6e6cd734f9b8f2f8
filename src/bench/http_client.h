// The bench's HTTP client: one streamed OpenAI chat request, every SSE chunk timestamped.
#pragma once

#include <functional>
#include <memory>
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
    int prefilled_tokens  = -1;  // prompt tokens computed, when reported as such (Ollama's
                                 // prompt_eval_count) rather than as prompt − cached
    std::string finish_reason;   // choices[0].finish_reason of the last chunk that had one
    std::string tool_name;       // the first tool call's function name (delta.tool_calls[0])
    std::string tool_call_id;    // its id, as the server named it
    std::string tool_arguments;  // its arguments, the streamed pieces concatenated
    int tool_calls       = 0;    // distinct tool calls seen (by index)
    int draft_n          = 0;  // speculative draft tokens verified (timings.draft_n, both servers)
    int draft_n_accepted = 0;  // of which kept (timings.draft_n_accepted)
    std::string session;       // the X-Superfluid-Session response header ("" elsewhere)
    // The token index of each SSE frame that named one (Superfluid's `id: SESSION:N`, the last
    // token a frame completes), in arrival order; empty for servers that send no ids.
    std::vector<long long> event_ids;

    /** Completion tokens: the usage figure, else the chunk count. */
    int tokens() const {
        return completion_tokens >= 0 ? completion_tokens : static_cast<int>(pieces.size());
    }
    /** Decode tokens/s: (tokens − 1) / (last − first token event); −1 with under two of each. */
    double decode_tokens_per_s() const {
        if (token_times.size() < 2 || tokens() < 2) return -1;
        const double span = token_times.back() - token_times.front();
        return span > 0 ? (tokens() - 1) / span : -1;
    }
};

/** Per-request knobs. */
struct request_options {
    std::string priority;  // "batch"/"interactive": body field + X-Superfluid-Priority header
    std::string api_key;   // sent as `Authorization: Bearer KEY` when not empty
    double timeout_s = 900;
    /** Called in the receiving thread after each content chunk (count so far, its time). */
    std::function<void(int, double)> on_token;
    /** Superfluid: `X-Superfluid-Detach: true`, the session outlives a client that goes away. */
    bool detach = false;
    /** > 0: the client drops the connection after this many token events (an interruption). */
    int cut_after_tokens = 0;
};

/**
 * Reads the bytes of one streamed answer into a stream_result as they arrive: one subclass per
 * stream format (OpenAI chat chunks below; Anthropic, Responses, Ollama in api_streams.h).
 * Sets `done` when the answer's last event came and `cut`/`error` on an in-band error.
 */
class stream_feeder {
  public:
    virtual ~stream_feeder() = default;
    /** Feeds bytes received at `t` (seconds since sent). */
    virtual void feed(const char *data, size_t len, double t) = 0;
};

/**
 * Appends `data` to `buf` and calls `line` with each complete line in it (without its "\n" or
 * "\r\n"), keeping the unfinished rest in `buf`.
 */
void split_lines(std::string &buf, const char *data, size_t len,
                 const std::function<void(const std::string &)> &line);

/** Makes the feeder of one request, writing into the given result. */
using feeder_factory = std::function<std::unique_ptr<stream_feeder>(stream_result &)>;

/**
 * POSTs `body` to BASE+path (the served model named, as discover_model found it; headers from
 * `opts`: priority, detach) and reads the streamed answer with a feeder from `make`.
 */
stream_result post_stream(const std::string &base_url, const std::string &path, nlohmann::json body,
                          const request_options &opts, const feeder_factory &make);

/** GETs BASE+path (a re-attach) and reads the streamed answer with a feeder from `make`. */
stream_result get_stream(const std::string &base_url, const std::string &path,
                         const request_options &opts, const feeder_factory &make);

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
 * Superfluid's Prometheus series `superfluid:NAME` (no labels) from BASE/metrics; -1 when the
 * server does not answer within `timeout_s` or has no such series.
 */
double superfluid_metric(const std::string &base_url, const std::string &name,
                         double timeout_s = 10);

/**
 * Asks BASE/v1/models for the served model's id and remembers it: later requests to BASE name
 * it (Superfluid refuses other names). Returns the id ("" when none).
 */
std::string discover_model(const std::string &base_url);

/**
 * A chat request body: seeded sampling (deterministic per request), `max_tokens`, seed 1234 +
 * `seed_offset`. Give distinct requests that are compared as a group distinct offsets: with
 * one seed, requests whose prompts end alike draw the same first token, so a group's TTFT
 * hinges on one draw per server, e.g. leading whitespace the chat parser never shows (measured
 * on bench-lfm2: our first token was "\n" in all 31 prefix hits, one decode step more to the
 * first visible token; llama-server's was a word).
 */
nlohmann::json chat_body(nlohmann::json messages, int max_tokens, int seed_offset = 0);

/**
 * Incremental SSE parser over the bytes of an OpenAI chat stream (exposed for tests). A token
 * event is a chunk with content, reasoning or tool-call arguments.
 */
class sse_reader : public stream_feeder {
  public:
    explicit sse_reader(stream_result &out) : out_(out) {}
    /** Feeds bytes received at `t` (seconds since sent). */
    void feed(const char *data, size_t len, double t) override;

  private:
    void line(const std::string &l, double t);
    void delta(const nlohmann::json &d, double t);
    stream_result &out_;
    std::string buf_;
};

}  // namespace sf::bench
