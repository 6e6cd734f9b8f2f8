// The endurance trajectory's conversation in each API's native shapes (bench --api): OpenAI chat
// completions, Anthropic Messages, OpenAI Responses and Ollama /api/chat. Each builds the turn's
// request (the tools, a forced call: any tool, or one named), sends it streamed, re-attaches to
// a dropped answer, and appends the assistant's call and the tool's result the way that API's
// clients do.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/http_client.h"

namespace sf::bench {

/** One trajectory's conversation in one API. */
class endurance_conversation {
  public:
    virtual ~endurance_conversation() = default;

    /**
     * The next turn's request body: the tools, a forced call (`named` non-empty: that tool;
     * else any tool), one call only, at most `max_tokens` answer tokens, seeded sampling.
     */
    virtual nlohmann::json request(const std::string &named, int max_tokens) const = 0;

    /** Sends `body` to the API's endpoint, streamed, and reads the answer. */
    virtual stream_result send(const std::string &base_url, const nlohmann::json &body,
                               const request_options &opts) const = 0;

    /**
     * Re-attaches to the Superfluid session of a dropped answer: the whole answer, replayed
     * from the journal and then followed live. Default: GET /v1/sessions/{id}/events read as
     * OpenAI chat chunks (the format Ollama sessions replay in); Anthropic reads its own
     * events there, Responses re-attaches through GET /v1/responses/{id}?stream=true.
     */
    virtual stream_result reattach(const std::string &base_url, const std::string &session,
                                   const request_options &opts) const;

    /**
     * Completes an answer's call where the API carries it outside tool calls (Ollama: the
     * schema-forced JSON content {"name","arguments"}). Default: nothing to do.
     */
    virtual void normalize(stream_result &) {}

    /**
     * Appends the assistant's turn and the tool's result: the call when there was one (a
     * malformed one with empty arguments and `problem` in the result, as agents recover), else
     * the answer's text and a user nudge with the result.
     */
    virtual void append(const stream_result &s, bool valid, const std::string &problem, int turn,
                        const std::string &result) = 0;

  protected:
    /** The tool result's text: `result`, after the error when the call was malformed. */
    static std::string result_text(bool valid, const std::string &problem,
                                   const std::string &result);
};

/** The API names --api takes. */
bool known_api(const std::string &api);

/**
 * A conversation in `api` ("openai", "anthropic", "responses", "ollama") starting with the
 * system prompt and the user's task.
 */
std::unique_ptr<endurance_conversation> make_conversation(const std::string &api,
                                                          const std::string &system,
                                                          const std::string &task);

}  // namespace sf::bench
