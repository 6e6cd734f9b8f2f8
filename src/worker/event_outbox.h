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

class event_outbox final : public event_sink {
  public:
    /** `stream_id`: the head's id of the Events call this outbox feeds (> 0). */
    explicit event_outbox(uint64_t stream_id) : stream_id_(stream_id) {}

    uint64_t stream_id() const { return stream_id_; }

    /**
     * Binds a session to this outbox; its events come through `deliver`. Returns false when the
     * outbox is closed (the stream ended): the caller relays on the Generate call instead.
     */
    bool bind(const std::string &session_id, std::shared_ptr<event_channel> channel);
    /** Tick thread: queues an event (a FINISHED one unbinds its session). Never blocks long. */
    void deliver(const std::string &session_id, session_event ev) override;
    /** Tick thread, at a tick's end: wakes the writer if events are queued. */
    void flush();
    /**
     * The stream's thread: waits up to `timeout` for a flush, then moves out every queued
     * (session id, event). Returns false (and nothing) when nothing came.
     */
    bool take(std::vector<std::pair<std::string, session_event>> &out,
              std::chrono::milliseconds timeout);
    /** Ends the outbox: later binds fail, and every bound session's channel is cancelled. */
    void close();
    /** Cancels one bound session (the Cancel RPC); false when it is not bound here. */
    bool cancel(const std::string &session_id);
    /** Forgets a bound session that never reached the scheduler (refused). */
    void unbind(const std::string &session_id);
    bool closed();

  private:
    const uint64_t stream_id_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<std::pair<std::string, session_event>> queue_;
    bool flushed_ = false;
    bool closed_  = false;
    std::map<std::string, std::shared_ptr<event_channel>> bound_;
};

}  // namespace sf
