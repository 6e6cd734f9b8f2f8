// A session's priority class and the events it produces (tokens, then one finish), as the
// worker emits them, the protocol carries them and the head journals and relays them.
// Plain data: no I/O, no JSON, no gRPC.
#pragma once

#include <cstdint>
#include <string>

#include "core/priority.h"
#include "core/token.h"

namespace sf {

enum class finish_reason { STOP, LENGTH, CANCELLED, ERROR };

/** One event of a session, in order: tokens (index 0, 1, …) then exactly one finish. */
struct session_event {
    enum class kind { TOKEN, FINISHED } type = kind::TOKEN;
    // TOKEN
    uint32_t index = 0;  // position among the session's generated tokens
    token_id token = 0;
    std::string piece;  // raw bytes of the token
    std::string text;   // text released by this event (whole code points, no stop string)
    // FINISHED
    finish_reason reason = finish_reason::STOP;
    std::string stop_string;
    std::string error;
    int32_t prompt_tokens     = 0;
    int32_t completion_tokens = 0;
    // FINISHED, and TOKEN index 0: prompt tokens reused from the prefix cache.
    int32_t cached_tokens = 0;
    // FINISHED: speculative draft tokens verified for the session and how many were kept
    // (llama-server's timings.draft_n / draft_n_accepted). Counted since its last placement.
    int32_t draft_tokens   = 0;
    int32_t draft_accepted = 0;

    bool operator==(const session_event &) const = default;
};

}  // namespace sf
