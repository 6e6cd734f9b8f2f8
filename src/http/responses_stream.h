// One OpenAI Responses API answer rendered from a session: the chat output parser and the
// responses_builder fed token by token from the session's events — the journaled tokens — so
// every reader (the creating POST, GET /v1/responses/{id} polls, a re-attached stream, a reader
// after a head restart) sees the same events with the same sequence_numbers, and the same
// response object. Not thread-safe (one per reader).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/responses_response.h"
#include "chat/output_parser.h"
#include "session/session.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace sf {

/** The Responses id of a session: "resp_<session id>". */
std::string responses_id(const std::string &session_id);

/** A reader's state over one session. */
struct responses_run {
    /**
     * `s` must be an "openai.responses" session; its client_meta holds the echoed request
     * fields (JSON). `skip_through`: events with sequence_number <= it are not returned.
     */
    responses_run(std::shared_ptr<session> s, int64_t skip_through = -1);

    /**
     * Feeds what arrived past the cursor, waiting up to `wait` when nothing is new; returns
     * the SSE frames it makes (the opening events on the first call). Sets `done` once the
     * terminal event was made.
     */
    std::string feed(std::chrono::milliseconds wait);
    /**
     * The response object now: output so far and status (queued while no token came yet,
     * in_progress, then completed / incomplete / cancelled / failed with usage).
     */
    nlohmann::json object() const;

    std::shared_ptr<session> s;
    chat_output_parser parser;
    responses_builder builder;
    size_t cursor = 0;
    bool started  = false;
    bool done     = false;
};

/** The echoed request fields a Responses session journaled ({} when none). */
nlohmann::json responses_echo(const session &s);

/**
 * Streams `r` as SSE until its terminal event. `cancel_on_disconnect`: a client that goes away
 * cancels the generation (a plain streaming POST; never a background one or a re-attach).
 */
void serve_responses_stream(const httplib::Request &req, httplib::Response &res,
                            std::shared_ptr<responses_run> r, bool cancel_on_disconnect);

}  // namespace sf
