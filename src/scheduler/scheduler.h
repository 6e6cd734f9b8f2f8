// The tick loop: admits sessions into the engine's sequence slots (continuous batching:
// a session that arrives while others generate joins the next tick), plans each tick with
// plan_tick, runs one engine decode per tick, samples, and streams events to each session's
// channel. One thread runs `run()`; `submit`, `stats` and `stop` may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "engine/text_stream.h"
#include "scheduler/tick_planner.h"
#include "scheduler/types.h"

namespace sf {

/** Counters, read without stopping the loop. */
struct scheduler_stats {
    uint64_t ticks                 = 0;  // decode calls
    uint64_t batched_ticks         = 0;  // decodes that carried more than one sequence
    int32_t max_sequences_per_tick = 0;
    int32_t active                 = 0;  // sequences holding a slot
    int32_t waiting                = 0;  // sessions waiting for a slot
    uint64_t prompt_tokens         = 0;  // prompt tokens decoded
    uint64_t generated_tokens      = 0;  // tokens sampled
};

class scheduler {
  public:
    /** `engine` must outlive the scheduler. */
    scheduler(engine_i &engine, planner_options opts);
    ~scheduler();

    /** Queues a session; its events arrive on req.channel. Never blocks on the tick. */
    void submit(sequence_request req);
    /** Runs the loop on the calling thread until stop(). */
    void run();
    /** Starts run() on an owned thread. */
    void start();
    /** Ends the loop; running sessions get a CANCELLED finish. */
    void stop();
    scheduler_stats stats() const;

  private:
    struct slot_state {
        bool used = false;
        sequence_request req;
        std::vector<token_id> pending;  // tokens to decode next
        int32_t n_past       = 0;       // tokens in this sequence's KV cache
        bool generating      = false;
        uint32_t n_generated = 0;
        uint64_t last_served = 0;
        uint64_t arrival     = 0;
        std::optional<text_stream> text;
    };

    void admit_locked();
    void drop_cancelled();
    bool tick();
    void finish(int slot, finish_reason reason, std::string error = {});
    void on_sampled(int slot, token_id t);

    engine_i &engine_;
    planner_options opts_;
    std::vector<slot_state> slots_;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<sequence_request> waiting_;  // ordered by class on admission
    bool stopping_     = false;
    uint64_t arrivals_ = 0;
    uint64_t tick_no_  = 0;
    scheduler_stats stats_;
    std::thread thread_;
};

}  // namespace sf
