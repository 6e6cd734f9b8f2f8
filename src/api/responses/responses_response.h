// Builds OpenAI Responses API answers from the core chat layer's deltas: the response object
// (output items reasoning / message / function_call, usage, status) and, when streaming, the
// typed SSE events in the documented order — response.created, response.in_progress, per item
// output_item.added → (content_part.added → *.delta … → *.done → content_part.done) →
// output_item.done, then response.completed / response.incomplete / response.failed — each
// with a strictly increasing sequence_number. One item is open at a time. Not thread-safe.
// A cancelled (background) response ends with `response.cancelled`: OpenAI documents no
// terminal event for cancellation, so this one is Superfluid's own.
// Fed the same deltas, it makes the same events: a reader re-attaching with `starting_after`
// gets its events from a builder replayed over the journaled tokens (skip_through).
// Calls to a custom (freeform) tool are `custom_tool_call` items whose `input` is the string
// the model gave (custom_tool_call_input.delta once the call is whole, then .done); calls to
// a namespace's tool carry `namespace` and the tool's own `name` (api/responses/responses_tools.h,
// the map rebuilt from the echoed `tools`). Every item carries `status`; the item open when
// max_output_tokens cut the answer ends `incomplete`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/responses/responses_tools.h"
#include "chat/output_parser.h"
#include "core/session_event.h"

namespace sf {

class responses_builder {
  public:
    /** `id`: "resp_…"; `echo`: request fields the response repeats. */
    responses_builder(std::string id, std::string model, int64_t created, nlohmann::json echo);

    /**
     * Events with sequence_number <= `n` are still counted but not returned (a re-attached
     * reader that has them already). -1: none skipped.
     */
    void skip_through(int64_t n) { skip_through_ = n; }

    /** The opening events (response.created, response.in_progress) as SSE frames. */
    std::string start();
    /** Applies deltas; returns the SSE frames they produce ("" when none). */
    std::string apply(const std::vector<chat_delta> &deltas);
    /**
     * Closes the open item and ends the response: completed (stop), incomplete (length:
     * max_output_tokens), cancelled (cancelled) or failed (`error` non-empty). Token counts
     * fill `usage` (`cached_tokens`: prompt tokens reused from the prefix cache). Returns the
     * closing SSE frames.
     */
    std::string finish(finish_reason reason, const std::string &error, int32_t input_tokens,
                       int32_t output_tokens, int32_t cached_tokens);
    /** The response object in its current state (final after finish()). */
    nlohmann::json response() const;

  private:
    enum class item_kind { NONE, REASONING, MESSAGE, FUNCTION_CALL, CUSTOM_TOOL_CALL };
    std::string event(const char *type, nlohmann::json body);
    std::string open(item_kind k, const chat_delta *call);
    /** Ends the open item with `status` (completed, or incomplete when cut short). */
    std::string close(const char *status = "completed");
    std::string append_text(item_kind k, const std::string &text);

    std::string id_, model_;
    int64_t created_ = 0;
    nlohmann::json echo_;
    responses_tool_map tools_;
    std::string custom_args_;  // the open custom tool call's arguments JSON so far
    std::string status_    = "in_progress";
    nlohmann::json output_ = nlohmann::json::array();
    nlohmann::json usage_, error_, incomplete_;
    int64_t seq_          = 0;
    int64_t skip_through_ = -1;
    item_kind open_       = item_kind::NONE;
    size_t open_tool_     = 0;
    std::string pending_ws_;  // whitespace-only content, held until real content follows
};

}  // namespace sf
