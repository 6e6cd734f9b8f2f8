// Builds OpenAI Responses API answers from the core chat layer's deltas: the response object
// (output items reasoning / message / function_call, usage, status) and, when streaming, the
// typed SSE events in the documented order — response.created, response.in_progress, per item
// output_item.added → (content_part.added → *.delta … → *.done → content_part.done) →
// output_item.done, then response.completed / response.incomplete / response.failed — each
// with a strictly increasing sequence_number. One item is open at a time. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/output_parser.h"
#include "scheduler/types.h"

namespace sf {

class responses_builder {
  public:
    /** `id`: "resp_…"; `echo`: request fields the response repeats. */
    responses_builder(std::string id, std::string model, int64_t created, nlohmann::json echo);

    /** The opening events (response.created, response.in_progress) as SSE frames. */
    std::string start();
    /** Applies deltas; returns the SSE frames they produce ("" when none). */
    std::string apply(const std::vector<chat_delta> &deltas);
    /**
     * Closes the open item and ends the response: completed (stop), incomplete (length:
     * max_output_tokens) or failed (`error` non-empty). Returns the closing SSE frames.
     * `input_tokens` is the whole prompt; `cached_tokens` (of those, reused from the prefix
     * cache) goes to usage.input_tokens_details, as OpenAI reports it.
     */
    std::string finish(finish_reason reason, const std::string &error, int32_t input_tokens,
                       int32_t cached_tokens, int32_t output_tokens);
    /** The response object in its current state (final after finish()). */
    nlohmann::json response() const;

  private:
    enum class item_kind { NONE, REASONING, MESSAGE, FUNCTION_CALL };
    std::string event(const char *type, nlohmann::json body);
    std::string open(item_kind k, const chat_delta *call);
    std::string close();
    std::string append_text(item_kind k, const std::string &text);

    std::string id_, model_;
    int64_t created_ = 0;
    nlohmann::json echo_;
    std::string status_    = "in_progress";
    nlohmann::json output_ = nlohmann::json::array();
    nlohmann::json usage_, error_, incomplete_;
    int64_t seq_      = 0;
    item_kind open_   = item_kind::NONE;
    size_t open_tool_ = 0;
    std::string pending_ws_;  // whitespace-only content, held until real content follows
};

}  // namespace sf
