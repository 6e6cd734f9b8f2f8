// Types of the tick loop's callers (worker service, tests): a session's request as the tick
// loop sees it and the channel its events leave by. Priority classes and the events
// themselves are core/ types (core/session_event.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/session_event.h"
#include "engine/engine.h"

namespace sf {

/**
 * Where a channel forwards its events instead of queueing them: the worker's Events stream
 * (worker/event_outbox.h), which carries every session's events of a tick in one message.
 * `deliver` is called on the producing (tick) thread and must not block.
 */
class event_sink {
  public:
    virtual ~event_sink() = default;
    /** `epoch`: the submission's (worker_submission::epoch), carried back with the event. */
    virtual void deliver(const std::string &session_id, uint64_t epoch, session_event ev) = 0;
};

/**
 * A single-producer (tick thread) / single-consumer (the session's RPC thread) queue of
 * events, plus the consumer's cancel flag; or, built with a sink, a forwarder of the events to
 * that sink under the session's id (pop() then never returns one). Thread-safe.
 */
class event_channel {
  public:
    event_channel() = default;
    event_channel(std::shared_ptr<event_sink> sink, std::string session_id, uint64_t epoch)
        : sink_(std::move(sink)), session_id_(std::move(session_id)), epoch_(epoch) {}

    void push(session_event ev) {
        if (sink_) return sink_->deliver(session_id_, epoch_, std::move(ev));
        {
            std::lock_guard lk(mu_);
            q_.push_back(std::move(ev));
        }
        cv_.notify_one();
    }
    /** Pops the next event, waiting up to `timeout`; false when none arrived. */
    bool pop(session_event &out, std::chrono::milliseconds timeout) {
        std::unique_lock lk(mu_);
        if (!cv_.wait_for(lk, timeout, [&] { return !q_.empty(); })) return false;
        out = std::move(q_.front());
        q_.pop_front();
        return true;
    }
    void cancel() { cancelled_.store(true); }
    bool cancelled() const { return cancelled_.load(); }

  private:
    std::shared_ptr<event_sink> sink_;
    std::string session_id_;
    uint64_t epoch_ = 0;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<session_event> q_;
    std::atomic<bool> cancelled_{false};
};

/** A session as submitted to the tick loop: prompt already rendered and tokenized. */
struct sequence_request {
    std::string session_id;
    priority_class cls = priority_class::NORMAL;
    std::vector<token_id> prompt;
    std::vector<token_id> resume_tokens;  // already generated; generation continues after them
    sampling_params sampling;
    std::vector<std::string> stops;  // client stop strings + template stops
    std::shared_ptr<event_channel> channel;
    // Who sent it (api/common/priority.h client_identity: API key, else User-Agent, else
    // connection): fairness between clients (scheduler/service_policy.h). Empty: a client of
    // its own.
    std::string client;
    // Token offsets in `prompt` where a chat message ends (engine_i::message_boundaries):
    // where the prefix cache takes state snapshots on recurrent/hybrid models.
    std::vector<int32_t> boundaries;
    // Which sequences may share cached prefixes with this one (cache::cache_scope_id of the
    // request's cache_scope; 0: every unscoped one). Issue #38.
    uint64_t cache_scope = 0;
    // The sampler the engine built on the request's thread (engine_i::prepare_sampler; null:
    // seq_start builds it on the tick thread). Issue #38 item 4.
    std::shared_ptr<prepared_sampler> sampler;
};

}  // namespace sf
