// One generation request in one API dialect, behind the single interface with which
// http/generation_handler serves every dialect (issue #39): the request's parser, the stream
// encoder and the non-streamed body for its session, and its refusals in that API's shape.
// No HTTP and no waiting here: the handler reads the body, resolves the priority class and the
// model name, starts the session, then drives the stream (http/stream_driver.h) or waits for
// the end and asks for the body. Dialects: api/openai/openai_dialect.h (chat, completions),
// api/anthropic/anthropic_dialect.h, api/responses/responses_dialect.h,
// api/ollama/ollama_dialect.h (chat, generate).
// Threads: one object per request, used only by the thread that serves that request.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/common/api_error.h"
#include "api/common/stream_encoder.h"
#include "core/generate_request.h"
#include "core/session_event.h"
#include "session/session.h"

namespace sf {

/** A non-streamed answer as the handler collected it from the session's events. */
struct collected_answer {
    std::string text;              // released text: each token's, then the finish's tail
    std::vector<token_id> tokens;  // the answer's tokens, in order
    session_event fin;             // its end; a LENGTH end at the dialect's token_limit()
    std::optional<std::chrono::steady_clock::time_point> first_token;  // arrival of token 0
};

/** How the creating request is answered once its session started. */
enum class reply_mode {
    STREAM,   // the stream encoder's bytes, as tokens come
    WAIT,     // one body when the session ended
    AT_ONCE,  // one body now; the generation runs on (Responses' background)
};

/** A response body with its Content-Type. */
struct reply_body {
    std::string body;
    std::string content_type = "application/json";
};

class generation_dialect {
  public:
    virtual ~generation_dialect() = default;

    /** The error shape of this API (for every error before the first response byte). */
    virtual api_dialect errors() const = 0;
    /**
     * Reads the JSON `body` into `greq`, including what is journaled for any later reader
     * (`greq.api`, `greq.client_meta`) and keeping this request's own options. False with `err`
     * (status and fields) for a request this API refuses.
     */
    virtual bool parse(const std::string &body, generate_request &greq, api_error &err) = 0;
    /** True when model names follow Ollama's rules ("name:latest", its wording). */
    virtual bool ollama_names() const { return false; }
    /**
     * A request answered without a session (Ollama's load and unload requests): true with the
     * body in `out`. Called after the model name was resolved.
     */
    virtual bool answer_without_session(const generate_request &, reply_body &) { return false; }
    /** A refusal to start (core/submit_result.h) in this API's status and fields. */
    virtual api_error refusal(const start_error &se) const = 0;
    /**
     * The session started (`accepted_at`: when). False with `err` refuses it after all (the
     * handler cancels it): Ollama's options.num_ctx smaller than the prompt.
     */
    virtual bool accepted(const session &, std::chrono::steady_clock::time_point, api_error &) {
        return true;
    }
    /** How the creating request is answered. */
    virtual reply_mode mode() const = 0;
    /**
     * True when the client going away cancels the generation (unless it asked to detach,
     * X-Superfluid-Detach); false for Responses' background requests.
     */
    virtual bool cancel_on_disconnect() const { return true; }
    /** A non-streamed answer stops after this many tokens (Ollama's options.num_ctx). */
    virtual int64_t token_limit() const { return INT64_MAX; }
    /** The stream encoder of the creating request (mode STREAM). */
    virtual std::unique_ptr<stream_encoder> encoder(const session &s) = 0;
    /** The body of a non-streamed answer that ended well (mode WAIT), or the one of AT_ONCE. */
    virtual reply_body body(const session &s, const collected_answer &a) = 0;
    /**
     * The error for a non-streamed answer that failed or was cancelled: 503 while the server
     * shuts down ("try again later"), else 500, with the engine's message.
     */
    virtual api_error failed(const session_event &fin, bool shutting_down) const;
};

}  // namespace sf
