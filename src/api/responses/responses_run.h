// One OpenAI Responses API answer rendered from a session: its stream encoder
// (api/responses/responses_stream_encoder.h) fed token by token from the session's events — the
// journaled tokens — so every reader (the creating POST, GET /v1/responses/{id} polls, a
// re-attached stream, a reader after a head restart) sees the same events with the same
// sequence_numbers, and the same response object. Streams go through the one generation driver
// (http/stream_driver.h); responses_run is the non-streamed reader. Not thread-safe (one per
// reader).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/responses/responses_stream_encoder.h"
#include "session/session.h"

namespace sf {

/** The Responses id of a session: "resp_<session id>". */
std::string responses_id(const std::string &session_id);

/** The echoed request fields a Responses session journaled ({} when none). */
nlohmann::json responses_echo(const session &s);

/**
 * The stream encoder of an "openai.responses" session `s` (its id, model, creation time and
 * journaled echo make the events, so a reader in another process makes the same ones).
 * `skip_through`: events with sequence_number <= it are not returned (-1: none).
 */
std::unique_ptr<responses_stream_encoder> responses_encoder(const session &s,
                                                            int64_t skip_through = -1);

/** The echoed flag `name` ("store", "background") of a Responses session; false when absent. */
bool responses_flag(const session &s, const char *name);

/**
 * The response object of session `s` as it stands (every event it has so far), as the JSON body
 * of a non-streamed answer, a GET poll or a cancel; `status` gets its status alone.
 */
std::string responses_object_body(const session &s, std::string *status = nullptr);

/** A non-streaming reader's state over one session: the response object as tokens arrive. */
struct responses_run {
    /** `s` outlives the run. */
    explicit responses_run(const session &s);

    /** Feeds what arrived past the cursor, waiting up to `wait` when nothing is new. */
    void feed(std::chrono::milliseconds wait);
    /**
     * The response object now: output so far and status (queued while no token came yet,
     * in_progress, then completed / incomplete / cancelled / failed with usage).
     */
    nlohmann::json object() const;

    const session *s;
    std::unique_ptr<responses_stream_encoder> enc;
    size_t cursor = 0;
    bool done     = false;
};

}  // namespace sf
