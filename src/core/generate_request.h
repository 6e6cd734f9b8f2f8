// A generation request after API parsing: what every adapter (OpenAI, Anthropic, Ollama)
// produces and the session layer consumes. Plain data: no I/O, no JSON, no gRPC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/chat.h"
#include "core/sampling.h"
#include "core/session_event.h"
#include "core/token.h"

namespace sf {

struct generate_request {
    bool is_chat = true;
    std::vector<chat_message> messages;  // is_chat
    chat_options chat;                   // is_chat: tools, tool choice, schema, reasoning
    std::string prompt;                  // !is_chat (text completion)
    sampling_params sampling;
    bool has_seed      = false;  // else the session layer assigns one
    priority_class cls = priority_class::NORMAL;
    std::optional<priority_class> cls_from_body;  // set when the body chose (api/common/priority.h)
    std::string model;                            // as the client named it (echoed back)
    // The adapter, journaled so a re-attached stream speaks the same format: "openai.chat",
    // "openai.completion", … (empty: openai.chat / openai.completion from is_chat).
    std::string api;
    std::vector<token_id> prefix_tokens;  // before the rendered prompt (Ollama generate `context`)
    bool want_prompt_tokens = false;      // session::prompt_token_ids() gets filled
    // Adapter data journaled with the request and given back by session::client_meta() (the
    // Responses API keeps its echoed request fields here, JSON). Never sent to the model.
    std::string client_meta;
    // The client's User-Agent, for the status views (/api/ps, /ui). Not journaled.
    std::string user_agent;
    // Who sent it (api/common/priority.h client_identity, no secret in it): the worker's scheduler
    // shares service fairly between clients of a class. Journaled.
    std::string client;
    // The body's `cache_salt` (api/common/json_fields.h): head only, never journaled or sent; it
    // goes into cache_scope.
    std::string cache_salt;
    // Which requests this one may share cached prefixes with (issue #38): "" shares with every
    // unscoped request; else only with requests of the same scope. Set by the session layer
    // from cache_salt and, when sharing is per API key, the client's key id (no secret: a
    // SHA-256, cache/cache_scope.h). Journaled and sent to the worker.
    std::string cache_scope;
    // Head only, set by the session layer and journaled: which request this is, for a retry
    // after a head restart to find its session (session_manager.h). Never set by adapters.
    std::string retry_key;

    // How long the model stays loaded once idle after this request (Ollama's `keep_alive`), in
    // ms; k_keep_alive_unset: the server's --keep-alive; negative: never unloaded; 0: unloaded
    // as soon as it is idle. Head only (placement/model_set.h): never journaled or sent.
    static constexpr int64_t k_keep_alive_unset = INT64_MIN;
    int64_t keep_alive_ms                       = k_keep_alive_unset;

    bool operator==(const generate_request &) const = default;
};

/**
 * One placement of a session on a worker: the request (volatile lines removed, seed set,
 * has_seed true), where to resume, and the epoch that tells this placement's events from an
 * earlier one's. The journal keeps it (without resume_tokens) to resubmit the session.
 */
struct worker_submission {
    std::string session_id;
    uint64_t epoch = 0;  // > 0; events carry it back, the head accepts only the current one's
    generate_request request;
    std::vector<token_id> resume_tokens;  // generated (and journaled) so far; continue after them
    bool has_parse = false;               // chat: `parse` was journaled from the first accept
    chat_parse_spec parse;

    bool operator==(const worker_submission &) const = default;
};

}  // namespace sf
