// A dialect's stream encoder: a session's events in, the bytes of that API's own stream framing
// out (SSE events with ids, or NDJSON lines). Pure: no I/O, no clock, no session reads; the one
// generation driver (http/stream_driver.h) reads the session, watches the client and writes
// what the encoder returns. The same encoder serves the creating request and a reader that
// re-attaches later (GET /v1/sessions/{id}/events), so both see the same bytes (issue #39).
// Not thread-safe: one encoder per reader, used by the thread that serves that reader.
#pragma once

#include <string>

#include "core/session_event.h"

namespace sf {

class stream_encoder {
  public:
    virtual ~stream_encoder() = default;

    /** The stream's Content-Type ("text/event-stream", "application/x-ndjson"). */
    virtual const char *content_type() const = 0;
    /**
     * What a reader gets before any token. `resumed`: a reader that re-attached after tokens it
     * already has (skip() was called for each of them), which saw the opening then.
     */
    virtual std::string open(bool resumed) = 0;
    /** A token event the re-attached reader already has: state advances, nothing is written. */
    virtual void skip(const session_event &token) = 0;
    /**
     * The bytes of token event `token` ("" when it releases no text). `id` is its event id
     * ("<session>:<index>", http/session_ids.h), put on the last frame it completes so a
     * reader can re-attach after it.
     */
    virtual std::string token(const session_event &token, const std::string &id) = 0;
    /**
     * The bytes of the session's end `fin` (a stop, the length limit, a cancel or an error),
     * the last the stream carries; `id` marks its final frame (the completion-token count).
     */
    virtual std::string finish(const session_event &fin, const std::string &id) = 0;
    /** For a re-attached reader that already has the end: what closes its stream. */
    virtual std::string after_end() { return ""; }
    /**
     * True once the encoder wrote the stream's end before the session's (a cap the client set,
     * Ollama's options.num_ctx): the driver ends the stream and cancels the generation.
     */
    virtual bool ended() const { return false; }
    /** For a stream that wrote nothing for a while (a long prefill): keep-alive bytes, or "". */
    virtual std::string idle() { return ""; }
};

/**
 * One Server-Sent Events frame (WHATWG HTML "Server-sent events"): `id:` when `id` is set,
 * `event:` when `event` is set, then one `data:` line (`data` holds no newline: JSON).
 */
inline std::string sse_frame(const std::string &event, const std::string &data,
                             const std::string &id = "") {
    std::string f;
    if (!id.empty()) f += "id: " + id + "\n";
    if (!event.empty()) f += "event: " + event + "\n";
    return f + "data: " + data + "\n\n";
}

}  // namespace sf
