// The core chat layer's head half: turns a turn's generated text, as it streams in, into
// structured deltas (reasoning text, content text, tool-call start and argument text) and the
// final message, through llama.cpp `common` (common_chat_parse on the accumulated text, as
// llama-server does). Every adapter (OpenAI, Anthropic, Ollama, Responses) renders these
// deltas in its own wire shape, so tool calls and reasoning behave the same everywhere.
//
// Guarantees: deltas of one stream concatenate to the final message's field; a tool call's
// start (index, id, name) comes before its argument deltas and only once its name is
// complete; no delta ends inside a UTF-8 code point. Not thread-safe (one per response).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/chat.h"
#include "core/sampling.h"
#include "core/token.h"

namespace sf {

/** One piece of a streamed answer. */
struct chat_delta {
    enum class kind { REASONING, CONTENT, TOOL_CALL_START, TOOL_CALL_ARGS } type = kind::CONTENT;
    size_t tool_index = 0;  // TOOL_CALL_*: 0-based index of the call in the answer
    std::string text;       // REASONING / CONTENT / TOOL_CALL_ARGS: text to append
    std::string id;         // TOOL_CALL_START
    std::string name;       // TOOL_CALL_START
};

/** The answer of one turn, parsed. tool_calls[i].arguments is JSON text. */
struct parsed_message {
    std::string reasoning;
    std::string content;
    std::vector<tool_call> tool_calls;
};

class chat_output_parser {
  public:
    /**
     * `spec` comes from the worker (session::parse_spec()). Tool call ids are `id_prefix`
     * followed by the call's index (pass something unique per response, e.g. "call_<session>_").
     */
    chat_output_parser(const chat_parse_spec &spec, std::string id_prefix);
    ~chat_output_parser();
    chat_output_parser(const chat_output_parser &)            = delete;
    chat_output_parser &operator=(const chat_output_parser &) = delete;

    /** Appends generated text (whole code points) and returns the deltas it completes. */
    std::vector<chat_delta> push(std::string_view text);
    /** Generation ended: parses the whole text for good and returns the remaining deltas. */
    std::vector<chat_delta> finish();
    /** The message so far (final after finish()). */
    const parsed_message &message() const { return msg_; }
    /** The raw generated text so far. */
    const std::string &text() const { return text_; }

  private:
    struct impl;
    void diff(const parsed_message &next, bool final, std::vector<chat_delta> &out);

    impl *impl_;
    std::string id_prefix_;
    std::string text_;
    parsed_message msg_;  // what has been emitted as deltas, field by field
    std::vector<bool> started_;
};

}  // namespace sf
