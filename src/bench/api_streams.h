// The bench's readers of the non-OpenAI streams: Anthropic Messages (SSE), OpenAI Responses
// (SSE) and Ollama /api/chat (NDJSON), each mapped onto a stream_result as the chat reader
// fills it: token events (content, reasoning, a tool call's name or argument pieces), the first
// tool call's name, id and arguments, usage and a finish reason in OpenAI's terms ("stop",
// "length", "tool_calls").
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/http_client.h"

namespace sf::bench {

/**
 * Splits a stream into lines and hands each JSON object to `event`: SSE `data:` lines, or bare
 * JSON lines (NDJSON). Other lines (SSE `event:`, `id:`, comments) are skipped.
 */
class json_lines_feeder : public stream_feeder {
  public:
    explicit json_lines_feeder(stream_result &out) : out_(out) {}
    void feed(const char *data, size_t len, double t) override;

  protected:
    /** One JSON object of the stream, received at `t`. */
    virtual void event(const nlohmann::json &j, double t) = 0;
    /** Records a token event (ignored when empty). */
    void piece(std::string text, double t);
    stream_result &out_;

  private:
    std::string buf_;
};

/**
 * Anthropic Messages: message_start/message_delta usage (prompt = input_tokens +
 * cache_read_input_tokens + cache_creation_input_tokens, cached = cache_read_input_tokens),
 * tool_use blocks (one tool call each; input_json_delta pieces are its arguments), text and
 * thinking deltas, stop_reason (max_tokens → "length", tool_use → "tool_calls"), message_stop
 * ends it, an `error` event cuts it.
 */
class anthropic_reader : public json_lines_feeder {
  public:
    using json_lines_feeder::json_lines_feeder;

  protected:
    void event(const nlohmann::json &j, double t) override;

  private:
    int first_tool_block_ = -1;  // content block index of the first tool_use
};

/**
 * OpenAI Responses: function_call output items (one tool call each: name, call_id, argument
 * deltas), output/reasoning text deltas, response.completed (usage.input_tokens,
 * input_tokens_details.cached_tokens, output_tokens) or response.incomplete ("length") ends
 * it, response.failed or an `error` event cuts it.
 */
class responses_reader : public json_lines_feeder {
  public:
    using json_lines_feeder::json_lines_feeder;

  protected:
    void event(const nlohmann::json &j, double t) override;

  private:
    void usage(const nlohmann::json &response);
    std::string first_call_item_;  // item id of the first function_call
};

/**
 * Ollama /api/chat NDJSON: message.content and message.thinking pieces, message.tool_calls
 * (arguments are objects: kept as their JSON text), the `done` line (done_reason,
 * prompt_eval_count → prefilled_tokens, eval_count); an `error` line cuts it. Ollama reports
 * no prompt total, so prompt_tokens and cached_tokens stay -1.
 */
class ollama_reader : public json_lines_feeder {
  public:
    using json_lines_feeder::json_lines_feeder;

  protected:
    void event(const nlohmann::json &j, double t) override;
};

/** A factory of `Reader`s for post_stream / get_stream. */
template <class Reader>
feeder_factory reader_of() {
    return [](stream_result &r) -> std::unique_ptr<stream_feeder> {
        return std::make_unique<Reader>(r);
    };
}

}  // namespace sf::bench
