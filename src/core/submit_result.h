// A worker's answer to a submission, a render or an embedding, before any token: accepted (the
// prompt as it will be generated from) or refused (why, which picks each API's status and error
// shape). The worker protocol carries both (proto/worker.proto SubmitReply, RejectCode;
// protocol/convert maps them). Plain data: no I/O, no JSON, no gRPC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/chat.h"
#include "core/token.h"

namespace sf {

/** Why a session (or a render, an embedding) could not start; picks the API's error shape. */
struct start_error {
    enum class kind {
        INVALID_REQUEST,  // the request cannot be served as sent (400)
        CONTEXT_LENGTH,   // the prompt does not fit the context (400, each API's wording)
        UNAVAILABLE,      // no worker can take it now (503)
        OVERLOADED,       // the class queue is full: retry later (OpenAI 429 + Retry-After)
        INTERNAL          // the worker failed (500)
    } type = kind::INTERNAL;
    std::string message;
    std::string param;  // the request field at fault, if any

    bool operator==(const start_error &) const = default;
};

/** A worker's answer to a submission or a render: the prompt as it will be generated from. */
struct accepted_session {
    int32_t prompt_tokens = 0;
    int32_t cached_tokens = 0;  // prompt tokens whose KV was reused
    int32_t n_ctx         = 0;  // per-sequence context limit in tokens
    bool has_parse        = false;
    chat_parse_spec parse;                   // chat requests: how to parse the answer
    std::vector<token_id> prompt_token_ids;  // when the request asked for them
    uint64_t stream = 0;  // the event stream that carries this placement's events

    bool operator==(const accepted_session &) const = default;
};

}  // namespace sf
