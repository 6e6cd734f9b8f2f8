// The worker's side of the Events stream (proto/worker.proto): sessions' channels forward their
// events here from the tick thread; the stream's RPC thread takes everything of a tick at once
// (flush() at the tick's end) and writes it as one EventBatch. One gRPC message per tick instead
// of one per session and token: with 8 sessions that cut the messages, thread wake-ups and
// HTTP/2 frames per tick by 8 in both processes. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/types.h"

namespace sf {

/** One event leaving on the Events stream, with its session and submission epoch. */
struct outbox_event {
    std::string session_id;
    uint64_t epoch = 0;
    session_event ev;
};

class event_outbox final : public event_sink {
  public:
    /** `stream_id`: the head's id of the Events call this outbox feeds (> 0). */
    explicit event_outbox(uint64_t stream_id) : stream_id_(stream_id) {}

    uint64_t stream_id() const { return stream_id_; }

    /**
     * Binds a placement (session, epoch) to this outbox; its events come through `deliver`. A
     * bound older placement of the same session is cancelled. Returns false when the outbox
     * is closed (the stream ended): the caller refuses the submission.
     */
    bool bind(const std::string &session_id, uint64_t epoch,
              std::shared_ptr<event_channel> channel);
    /** Tick thread: queues an event (a FINISHED one unbinds its placement). Never blocks long. */
    void deliver(const std::string &session_id, uint64_t epoch, session_event ev) override;
    /**
     * Tick thread, at a tick's end: wakes the writer if events are queued. When they hold a
     * session's first token, waits (at most k_first_token_wait) until the writer has written
     * them: the writer runs as SCHED_BATCH (util/relay_sched.h) and would otherwise wait for a
     * free core, up to one kernel tick (4 ms) after the next decode started, on the path of
     * every time to first token. The wait is once per session.
     */
    void flush();
    /** The stream's thread, after writing what take() gave it. */
    void written();
    /**
     * The stream's thread: waits up to `timeout` for a flush, then moves out every queued
     * event. Returns false (and nothing) when nothing came.
     */
    bool take(std::vector<outbox_event> &out, std::chrono::milliseconds timeout);
    /**
     * Ends the outbox: later binds fail, and every bound session's channel is cancelled. Also
     * breaks the reference cycle of a bound placement (its channel holds this outbox as its sink,
     * the outbox holds the channel until the placement's FINISHED): whoever makes an outbox
     * closes it (worker_service::Events does on every exit).
     */
    void close();
    /** Cancels a bound placement (the Cancel RPC; epoch 0: any); false when not bound here. */
    bool cancel(const std::string &session_id, uint64_t epoch);
    /** Forgets a bound placement that never reached the scheduler (refused). */
    void unbind(const std::string &session_id, uint64_t epoch);
    bool closed();

  private:
    struct binding {
        uint64_t epoch = 0;
        std::shared_ptr<event_channel> channel;
    };
    const uint64_t stream_id_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<outbox_event> queue_;
    std::condition_variable written_cv_;
    bool flushed_     = false;
    bool closed_      = false;
    bool first_token_ = false;  // a queued event is some session's first token
    uint64_t flushes_ = 0;      // flushes with events so far
    uint64_t taken_   = 0;      // flushes whose events take() handed out
    uint64_t written_ = 0;      // ... and the writer wrote
    static constexpr std::chrono::milliseconds k_first_token_wait{3};
    std::map<std::string, binding> bound_;
};

}  // namespace sf
