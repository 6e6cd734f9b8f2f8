// The head's side of the worker's Events stream (proto/worker.proto): one reader thread keeps
// an Events call open and hands each event to its session's mailbox, where the session's pump
// thread reads it as it would read its own Generate call. All sessions' events of a tick arrive
// as one message, so 8 streaming sessions cost one gRPC read per tick instead of 8 (and the
// worker one write). When the call ends (the worker died or restarted), every session whose
// events it carried is told its stream was lost, and resumes as after a broken Generate call.
// Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "worker.grpc.pb.h"

namespace sf {

/**
 * One session's events from the Events stream, in order. Tokens go to the session's token
 * handler on the reader thread (no wake-up of the pump per token) once the pump installed it;
 * the finish, and tokens before that, wait for the pump in the queue.
 */
class event_mailbox {
  public:
    using token_handler = std::function<void(superfluid::worker::v1::Token &)>;
    /** Reader thread: the next event of this session. */
    void push(superfluid::worker::v1::GenerateEvent ev);
    /** The pump: handles queued tokens with `fn`, then has push() hand tokens to it. */
    void set_token_handler(token_handler fn);
    /** The stream carrying this session ended: next() returns false once the queue is read. */
    void lose();
    /** The session was cancelled here: next() returns false now. */
    void interrupt();
    /** Waits for the next event; false when the stream was lost or the wait interrupted. */
    bool next(superfluid::worker::v1::GenerateEvent &ev);
    bool lost();

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<superfluid::worker::v1::GenerateEvent> q_;
    token_handler on_token_;
    bool draining_    = false;  // set_token_handler is handing out the queued tokens
    bool lost_        = false;
    bool interrupted_ = false;
};

class worker_events {
  public:
    /**
     * `stub` must outlive this object; start() opens the stream in a thread. `around_batch`
     * (may be null) runs with true before one message's events are handed out and with false
     * after: the session manager holds the journal then, so a tick's tokens are one commit.
     */
    worker_events(superfluid::worker::v1::Worker::Stub *stub,
                  std::function<void(bool)> around_batch)
        : stub_(stub), around_batch_(std::move(around_batch)) {}
    ~worker_events();

    void start();
    void stop();

    /**
     * A fresh mailbox for `session_id`, registered before its Generate call (its first events
     * may arrive before the call's answer); replaces an earlier one of the same id.
     */
    std::shared_ptr<event_mailbox> open(const std::string &session_id);
    /**
     * After `accepted`: the Events call (`stream_id`) that carries the session. When that call
     * has already ended, the mailbox is lost at once (the session resumes).
     */
    void bind(const std::shared_ptr<event_mailbox> &box, uint64_t stream_id);
    /** Forgets the session's mailbox (finished, or its events come on its Generate call). */
    void close(const std::string &session_id, const std::shared_ptr<event_mailbox> &box);

    /** Messages (one per worker tick with events) and events read so far, for /metrics. */
    uint64_t batches() const { return batches_.load(); }
    uint64_t events() const { return events_.load(); }

  private:
    void run();

    superfluid::worker::v1::Worker::Stub *stub_;
    std::function<void(bool)> around_batch_;
    std::mutex mu_;
    std::condition_variable cv_;
    struct entry {
        std::shared_ptr<event_mailbox> box;
        uint64_t stream_id = 0;  // 0: not bound yet
    };
    std::map<std::string, entry> boxes_;
    uint64_t reading_ = 0;  // the Events call being read; 0: none
    bool stop_        = false;
    std::shared_ptr<grpc::ClientContext> call_;  // to cancel the read at stop()
    std::atomic<uint64_t> batches_{0};
    std::atomic<uint64_t> events_{0};
    std::thread thread_;
};

}  // namespace sf
