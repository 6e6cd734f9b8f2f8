// The head's whole view of one worker (a local child process today, a guest node later):
// submit a placement of a session, cancel it, one event stream carrying every session's
// events, load and model reports, render/tokenize, embed, health. The session layer sees
// workers only through this interface; placement/ implements it (placement/local_worker.h)
// and tests fake it (tests/unit/session/fake_worker_client.h). Core types only: no gRPC.
//
// Threads: every method may be called from any thread. A client delivers events to its
// listener on one thread of its own (the event thread), in the order the worker sent them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "core/generate_request.h"
#include "core/session_event.h"
#include "core/submit_result.h"
#include "core/worker_report.h"

namespace sf {

/** One event of a placement as it arrived on a worker's event stream. */
struct worker_event {
    std::string session_id;
    uint64_t epoch = 0;
    session_event ev;
};

/** Receives a worker's events. Called on the client's event thread only. */
class worker_listener {
  public:
    virtual ~worker_listener() = default;
    /** One message of the stream (a worker tick's events, of any sessions, in order). */
    virtual void on_events(uint64_t stream, std::vector<worker_event> &batch) = 0;
    /**
     * The stream ended (the worker died, restarted or was cut off): every placement it
     * carried is gone and its session must be resubmitted. Called after stream_open(stream)
     * turned false.
     */
    virtual void on_stream_lost(uint64_t stream) = 0;
};

/** Reachability and the worker's own report (health polling; deadline ~0.5 s). */
struct worker_health {
    bool reachable = false;
    worker_status status;
};

class worker_client {
  public:
    virtual ~worker_client() = default;

    /** Where events go; set once, before start(). */
    virtual void set_listener(worker_listener *l) = 0;
    /** Starts the worker (or connects) and its event stream. False when it cannot. */
    virtual bool start() = 0;
    /** Stops the event stream and the worker; no listener call after it returns. */
    virtual void stop() = 0;

    /**
     * Submits a placement. True with `acc` when the worker accepted it (its events follow on
     * stream acc.stream, tagged with sub.epoch); false with `err` when it refused it or could
     * not be reached within a few seconds (UNAVAILABLE).
     */
    virtual bool submit(const worker_submission &sub, accepted_session &acc, start_error &err) = 0;
    /** Cancels placement (session, epoch) if the worker runs it; never waits for the worker. */
    virtual void cancel(const std::string &session_id, uint64_t epoch) = 0;
    /** True while event stream `stream` is being read (its placements' events can arrive). */
    virtual bool stream_open(uint64_t stream) = 0;
    /**
     * Waits until the worker takes submissions (model loaded, event stream open) or `timeout`
     * passes; true when it does. linked_worker is woken by the event stream's first message,
     * which a worker sends once its model is loaded; this default (fakes, the node pool) asks
     * health() every 50 ms.
     */
    virtual bool wait_ready(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const worker_health h = health();
            if (h.reachable && h.status.ready) return true;
            if (std::chrono::steady_clock::now() >= deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }

    /**
     * Ollama's load request (a generation with no prompt): loads `model` (waits for it) and
     * applies `keep_alive_ms` as a request's keep_alive (generate_request::keep_alive_ms); 0
     * unloads it once idle without loading it. False with `err` when it cannot be loaded. This
     * default (one model, always loaded) does nothing.
     */
    virtual bool load_model(const std::string & /*model*/, int64_t /*keep_alive_ms*/,
                            start_error & /*err*/) {
        return true;
    }

    /** Renders and tokenizes as submit would, without generating (deadline ~30 s). */
    virtual bool render(const worker_submission &sub, accepted_session &acc, start_error &err) = 0;
    /** Mean-pooled (not normalized) vectors, one per input, in order. */
    virtual bool embed(const embed_batch &job, std::vector<embedding> &out, start_error &err) = 0;
    /** The loaded model's facts; false while unavailable. */
    virtual bool model_info(model_description &out) = 0;
    virtual worker_health health()                  = 0;

    /** Counters for /metrics and /api/ps: process starts, event stream messages and events. */
    struct counters {
        int32_t pid         = -1;
        int32_t starts      = 0;
        uint64_t batches    = 0;
        uint64_t events     = 0;
        int32_t standby_pid = -1;     // a hot standby worker process (placement/worker_process.h)
        bool standby_ready  = false;  // it has loaded the model
        int32_t promotions  = 0;      // times the standby took over from a dead worker
    };
    virtual counters stats() = 0;

    /** The nodes behind this client (a cluster's node pool); empty for a single worker. */
    virtual std::vector<node_report> nodes() { return {}; }

    /** The models behind this client (placement/model_set.h); empty for a single model. */
    virtual std::vector<model_report> models() { return {}; }

    /** The node running session `session_id` now ("" when not placed, or not a cluster). */
    virtual std::string session_node(const std::string & /*session_id*/) { return ""; }
};

}  // namespace sf
