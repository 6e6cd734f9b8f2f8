// The tick loop: admits sessions into the engine's sequence slots (continuous batching:
// a session that arrives while others generate joins the next tick), plans each tick with
// plan_tick, runs one engine decode per tick, samples, and streams events to each session's
// channel. One thread runs `run()` (the engine loop, the engine's only caller); `submit`,
// `stats` and `stop` may be called from any thread and only touch the inbox and the published
// stats under `mu_`, never waiting for engine work (issue #41).
//
// Each step of the loop, as vLLM's EngineCore.step(): drain the inbox (submissions since the
// last step) into the waiting queue, drop cancelled sessions, admit (place waiting sessions in
// free slots, parking a less urgent or more served sequence where none is free), tick (plan,
// batch, decode, results), publish a stats snapshot.
//
// Priority (issue #4):
// * Admission: waiting sessions enter free slots by (aged) class, FIFO within a class.
// * Preemption: when no slot is free and a waiting session's class is strictly more urgent
//   than a running one's, the least urgent running sequence is parked (KV state and sampler
//   saved to host memory, cells freed) and resumed later exactly where it stopped.
// * Aging: a sequence (waiting or running) that has not been served for `aging_ms` counts as
//   one class more urgent, two classes after 2 × aging_ms. So a batch sequence is planned
//   like an interactive one after at most 2 × aging_ms without service: it is never starved.
// * Within a class (issue #18, no marker needed): least attained service first, for admission,
//   prefill and same-class preemption (a newcomer parks the most-served sequence of its class
//   once that one had its quantum of service); scheduler/service_policy.h has the policy.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cache/prefix_cache.h"
#include "engine/engine.h"
#include "engine/text_stream.h"
#include "scheduler/service_policy.h"
#include "scheduler/tick_planner.h"
#include "scheduler/types.h"

namespace sf {

/** Counters, read without stopping the loop. */
struct scheduler_stats {
    uint64_t ticks                  = 0;  // decode calls
    uint64_t batched_ticks          = 0;  // decodes that carried more than one sequence
    uint64_t interrupted_ticks      = 0;  // decodes stopped for an interactive arrival
    int32_t max_sequences_per_tick  = 0;
    int32_t last_sequences_per_tick = 0;
    int32_t active                  = 0;  // sequences holding a slot
    int32_t waiting                 = 0;  // sessions waiting for a slot (new or parked)
    uint64_t prompt_tokens          = 0;  // prompt tokens decoded
    uint64_t generated_tokens       = 0;  // tokens sampled
    uint64_t preemptions            = 0;  // sequences parked to make room
    int64_t kv_used                 = 0;  // KV cells in use (the pool's, shared cells once)
    int64_t kv_total                = 0;  // KV cells in all (the pool, or streams x context)
    uint64_t spec_drafted           = 0;  // draft tokens verified (speculative decoding)
    uint64_t spec_accepted          = 0;  // of which the target sampled itself (kept)
    std::array<int32_t, k_classes> running_by_class{};
    std::array<int32_t, k_classes> waiting_by_class{};
    std::array<uint64_t, k_classes> preemptions_by_class{};  // by the parked sequence's class
};

struct scheduler_options {
    planner_options planner;
    int64_t aging_ms    = 10000;  // one class more urgent per aging_ms without service
    int32_t max_waiting = 1024;   // per class; beyond it submit() refuses (overload)
    // Target duration of the prompt part of a tick, ms; 0: prefill takes the whole planner
    // budget. A request arriving mid-tick waits for that tick, so this (plus the tick's decode
    // steps) bounds how late an interactive request's first tick starts. The prompt tokens per
    // tick follow the measured time (between planner.quantum and planner.prefill_budget).
    int32_t tick_ms = 0;
    // An interactive request that arrives while a tick without interactive work decodes stops
    // that decode (on engines that can drop a batch: attention KV), and is planned at once: the
    // tick in flight no longer delays its first token. The interrupted work is done again.
    bool interrupt_ticks = true;
    // Fewest prompt tokens per tick the control goes down to. Measured with the priority bench
    // (8 agents, 7,500-token prompts, 2 cores): with 64-token chunks the agents got ~25-40%
    // fewer tokens/s than with 128 (each tick also carries every generating sequence's decode
    // step and its output layer), while 128 kept the chat's first token within ~55 ms.
    int32_t min_prefill = 128;
    // Fairness within a class by least attained service (scheduler/service_policy.h).
    service_options service;
    // The scheduler's clock (aging, attained service, quanta, tick times); null: steady_clock.
    // Tests pass a fake one and drive the loop with step().
    std::function<std::chrono::steady_clock::time_point()> clock;
    // Prefix cache (src/cache), owned by the caller, used from the tick thread; null: none.
    cache::prefix_cache *cache = nullptr;
    // Called on the tick thread after each tick's events are pushed (and after the final
    // cancellations at stop): the worker sends the tick's events of all sessions as one batch.
    std::function<void()> on_tick_end;
};

class scheduler {
  public:
    /** `engine` must outlive the scheduler. */
    scheduler(engine_i &engine, scheduler_options opts);
    ~scheduler();

    /**
     * Queues a session; its events arrive on req.channel. Never blocks on the tick.
     * Returns false (nothing queued) when its class already has max_waiting sessions waiting.
     */
    bool submit(sequence_request req);
    /** Runs the loop on the calling thread until stop(). */
    void run();
    /** Starts run() on an owned thread, after the engine's warm-up there (returns after it). */
    void start();
    /**
     * One iteration of the loop on the calling thread, without waiting: drops cancelled
     * sessions, admits waiting ones, runs one tick. Returns false when the tick had nothing to
     * decode. For tests (with a fake clock) and callers that run the loop themselves; never
     * while run() runs.
     */
    bool step();
    /** Ends the loop; running and waiting sessions get a CANCELLED finish. */
    void stop();
    scheduler_stats stats() const;

  private:
    using clock = std::chrono::steady_clock;

    struct seq_state {
        sequence_request req;
        std::vector<token_id> pending;  // tokens to decode next
        int32_t n_past       = 0;       // tokens in this sequence's KV cache
        bool generating      = false;
        bool started         = false;  // seq_start done (false: a new request)
        int64_t parked       = -1;     // engine handle while parked
        int64_t unpark_retry = -1;     // pool cells in use when its restore found no room
        uint32_t n_generated = 0;
        uint64_t last_served = 0;  // tick number
        clock::time_point last_served_at;
        uint64_t arrival = 0;
        std::optional<text_stream> text;
        // Prompt, resumed and sampled tokens; the engine's memory holds the first n_past.
        std::vector<token_id> tokens;
        bool attached    = false;  // the prefix cache was consulted: prefill may start
        int32_t cached   = 0;      // prompt tokens reused from the cache
        int32_t drafted  = 0;      // speculative draft tokens verified for it
        int32_t accepted = 0;      // of which it sampled itself (kept)
        // Speculation adapts to what is kept (scheduler_speculation.cpp): the draft length of
        // the next tick (-1: the engine's maximum), ticks left without a draft, and verifications
        // in a row that kept nothing.
        int32_t draft_len     = -1;
        uint32_t draft_wait   = 0;
        uint32_t draft_misses = 0;
        std::vector<int32_t> boundaries;  // snapshot points still ahead (snapshot mode)
        decayed_count service;            // attained service (tokens computed, decayed)
        int64_t served_in_slot = 0;       // tokens computed since it last entered a slot
        uint32_t parks         = 0;       // times it was parked
        service_rank queue_rank;          // admission's sort key, set before each sort
        // The engine's memory holds verified draft cells beyond n_past while a tick's accepted
        // tokens are handed out one by one: finish() cuts them before the cache keeps it.
        bool cells_ahead = false;
        // Its next token is being sampled off the tick thread (engine_i::sample_deferred): not
        // planned, not parked, until collect_deferred hands the token out.
        bool sampling = false;
    };
    struct slot {
        bool used = false;
        seq_state seq;
        // A free slot whose engine memory still holds the tokens of the sequence that ended in
        // it (positions 0..n-1), as llama-server's slots keep theirs. The next sequence placed
        // here that shares a prefix with them continues from it in place: no state copy into
        // the prefix cache when the sequence ends, none out of it when the next one starts.
        // Other slots copy from it as from a live sequence. It goes into the prefix cache
        // (retain) only when an unrelated sequence takes the slot (scheduler_reuse.cpp).
        std::vector<token_id> held;
        uint64_t held_since = 0;  // tick number when it was freed: the oldest is taken first
        uint64_t held_scope = 0;  // the cache scope of the sequence that held it
    };

    // The tick's batch (build_batch): one item per plan entry, each item's draft length, and
    // the prompt tokens and decode steps it carries.
    struct tick_batch {
        std::vector<batch_item> items;
        std::vector<int32_t> drafts;
        int32_t n_prompt = 0;
        int32_t n_steps  = 0;
    };

    priority_class aged(const seq_state &s, clock::time_point now) const;
    // Tick thread: moves the inbox's sessions to waiting_ (mu_ taken briefly).
    void drain_inbox();
    // Tick thread: recomputes the counts and copies stats_ to published_ (under mu_).
    void publish_stats();
    // Tick thread, scheduler_admission.cpp: places waiting sessions by aged class, then least
    // attained service, parking a running sequence where that makes room.
    void admit(clock::time_point now);
    void place(int slot_index, seq_state &&s);
    int pick_victim(priority_class waiting_cls) const;
    int pick_fair_victim(const seq_state &newcomer, clock::time_point now) const;
    bool park(int slot, const seq_state &for_whom, clock::time_point now);
    // Tick thread, scheduler_pool.cpp: the shared KV pool (engine_i::kv_cells_total() >= 0).
    // pool_admits: whether waiting `w` fits in the cells left beside the prompts placed
    // sequences still have to prefill. pool_room: frees cells for a tick of `need` tokens
    // (held prefixes to the prefix cache, then parking the least urgent sequence); false when
    // it parked one (the tick is planned again).
    bool pool_admits(const seq_state &w) const;
    bool pool_room(int64_t need, clock::time_point now);
    void pool_release_for(const seq_state &w, int keep_slot);
    int pick_pool_victim(clock::time_point now) const;
    service_rank rank(const seq_state &s, clock::time_point now) const;
    const std::string &client_of(const seq_state &s) const;
    clock::time_point now() const { return opts_.clock ? opts_.clock() : clock::now(); }
    void drop_cancelled();
    // One tick: plan_inputs + plan_tick, build_batch, the decode, results.
    bool tick();
    std::vector<plan_input> plan_inputs(clock::time_point now) const;
    planner_options tick_planner_options() const;
    tick_batch build_batch(const std::vector<plan_entry> &plan);
    void results(const std::vector<plan_entry> &plan, const tick_batch &batch, int rc);
    void finish(int slot, finish_reason reason, std::string error = {});
    // After a successful decode of `items` (items[i] belongs to plan[i], with a draft of
    // drafts[i] tokens): charges service, advances the sequences, samples or verifies
    // (scheduler_decode.cpp).
    void settle(const std::vector<plan_entry> &plan, const std::vector<batch_item> &items,
                const std::vector<int32_t> &drafts);
    // After a failed decode of `items`: decodes its halves again, settles those that decode and
    // halves those that fail, so only a sequence that fails alone ends (with an error).
    void decode_apart(const std::vector<plan_entry> &plan, const std::vector<batch_item> &items,
                      const std::vector<int32_t> &drafts);
    void finish_waiting(seq_state &s, finish_reason reason);
    void on_sampled(int slot, token_id t);
    // Hands out the tokens of deferred samples that finished (engine_i::take_deferred).
    void collect_deferred();
    // Speculative decoding (tick thread): adds a draft to each eligible decode step of `plan`
    // (items[i] belongs to plan[i]); returns each item's draft length.
    std::vector<int32_t> add_drafts(const std::vector<plan_entry> &plan,
                                    std::vector<batch_item> &items);
    // Verifies item `item` of slot `slot` (a decode step with a draft of n_draft tokens) after
    // the decode: samples while the draft holds, cuts the rejected cells, hands out the tokens.
    void verify(int slot, int item, const batch_item &it, int32_t n_draft);
    void adapt_drafts(seq_state &s, int32_t n_draft, int32_t accepted);
    void attach_new();
    // Prefix reuse across slots (scheduler_reuse.cpp).
    int choose_free_slot(const seq_state &next) const;
    int32_t held_reuse(int slot, std::span<const token_id> tokens, int32_t max_len,
                       uint64_t scope) const;
    void release_held(int slot);
    // Whether a held memory deserves a cache entry when its slot is let go (hybrid: a tail of
    // a quantum or more past what the cache holds).
    bool worth_retaining(std::span<const token_id> held, uint64_t scope) const;
    int32_t reusable_soon(int slot, int32_t max_len) const;
    // The snapshot points of `points` (ascending) that lie at least `quantum` tokens past
    // `from` (the restored prefix) and past the previous point kept.
    static std::vector<int32_t> spaced_snapshot_points(const std::vector<int32_t> &points,
                                                       int32_t from, int32_t quantum);
    // Most prompt tokens a new sequence may take from a cache: all but the last (which is
    // decoded for its logits).
    static int32_t reuse_limit(const seq_state &s) {
        return static_cast<int32_t>(std::min(s.req.prompt.size(), s.tokens.size() - 1));
    }
    std::vector<cache::live_source> live_sources(int except) const;
    // Tick thread: recomputes stats_' running and waiting counts from slots_/waiting_.
    void update_counts();
    void adapt_prefill_budget(int32_t prefill_tokens, int32_t decode_steps, double tick_ms);

    // Ownership: engine_, slots_, waiting_, ledger_, stats_, tick_no_, prefill_budget_,
    // prefill_fit_, decode_step_ms_, samples_, deferred_ and last_idle_ belong to the tick thread
    // alone (run() and what it calls). mu_ guards only what other threads touch: inbox_ and
    // inbox_by_class_ (submit() appends), published_ (stats() reads; the tick thread copies
    // stats_ into it after each step), stopping_, deferred_ready_ (set by the engine's sampling
    // thread) and arrivals_. The engine is never called with mu_ held.
    engine_i &engine_;
    scheduler_options opts_;
    std::vector<slot> slots_;
    service_ledger ledger_;
    std::vector<sample_request> samples_;             // a tick's engine_i::sample_many, reused
    std::vector<std::pair<int, token_id>> deferred_;  // engine_i::take_deferred's, reused

    std::deque<seq_state> waiting_;  // new requests and parked sequences (tick thread)
    scheduler_stats stats_;          // the tick thread's counters

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<seq_state> inbox_;  // submitted, not yet seen by the tick thread
    std::array<int32_t, k_classes> inbox_by_class_{};
    scheduler_stats published_;  // stats_ as of the last step
    bool stopping_          = false;
    bool deferred_ready_    = false;  // a deferred sample finished (engine_i::on_deferred_ready)
    bool last_idle_         = false;  // the last step() planned nothing (tick thread)
    uint64_t arrivals_      = 0;
    uint64_t tick_no_       = 0;
    int32_t prefill_budget_ = 0;   // prompt tokens per tick now (adapted to tick_ms)
    double decode_step_ms_  = 0;   // measured cost of one decode step (ticks without prefill)
    double prefill_fit_     = -1;  // prompt tokens that fit tick_ms, no floor (-1: not measured)
    // Interrupting the tick in flight (engine_i::set_interrupt): the tick thread sets
    // plain_decode_ while a decode without interactive work runs; submit() of an interactive
    // request then sets interrupt_, which the engine reads mid-decode. The tick thread clears
    // both after each decode, so one arrival stops at most the decode in flight.
    std::atomic<bool> interrupt_{false};
    std::atomic<bool> plain_decode_{false};
    std::thread thread_;
};

}  // namespace sf
