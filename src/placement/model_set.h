// Several models, one server (issue #40): one worker_client per served model behind the
// interface the session layer already speaks. A submission goes to the model its request names
// (generate_request::model, the served model's id that http/model_names resolved; the journal
// keeps it, so a resumed session returns to its own model); a name no model has goes to the
// default model. Each resident model is its own worker process (placement/local_worker), so a
// crash stays with its model: its Events stream ends, its sessions resume on it.
//
// Residency policy:
//   - the default model is loaded at start() and never unloaded for being idle;
//   - another model is loaded by the first submission that needs it; that submission (and any
//     other for it) waits for the load, it never fails for it;
//   - a model is idle when no session placed on it is unfinished and no submission for it is in
//     flight or waiting; a non-default model idle for its keep-alive (the server's, or the last
//     request's Ollama `keep_alive`; 0: at once; negative: never) is unloaded;
//   - with max_models > 0, a submission for a model that is not resident while max_models are
//     waits until one of them is idle, which is then unloaded (the least recently used first);
//     a model with running or queued sessions is never unloaded.
// Stream ids carry their load: each load of a model gets a stream_base of its own (a multiple
// of 2^40), so events and losses are told apart between workers and between loads.
//
// Threads: every method is thread-safe. mu_ guards the slots; it is never held while calling
// into a model's client (start, stop, submit block) or the listener. Loads run on the loader
// thread only: a worker process gets its parent-death signal when the thread that spawned it
// ends, so no request thread may spawn one. Models' event threads call
// the listener through on_events / on_stream_lost, serialized by listener_mu_. The reaper
// thread unloads expired models.
#pragma once

#include <chrono>
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

#include "session/worker_client.h"

namespace sf {

class model_set final : public worker_client, private worker_listener {
  public:
    /** Makes the worker client of model `index` (its order in `models`) for one load. */
    using factory = std::function<std::unique_ptr<worker_client>(size_t index, uint64_t base)>;

    /** A served model: its id (what requests name and answers carry) and its file. */
    struct model {
        std::string id, path;
    };

    struct options {
        /** Idle time before a non-default model is unloaded; negative: never; 0: at once. */
        std::chrono::milliseconds keep_alive{std::chrono::minutes(5)};
        /** Most models resident at once; 0: no limit. */
        int max_models = 0;
        /** How long a load may take before its submissions fail (UNAVAILABLE). */
        std::chrono::milliseconds load_timeout{std::chrono::minutes(10)};
    };

    /**
     * `models`: the served models, ids unique; `default_index`: the one loaded at start and
     * answering unknown names; `make`: a fresh client for one load of a model.
     */
    model_set(std::vector<model> models, size_t default_index, factory make, options o);
    ~model_set() override;

    void set_listener(worker_listener *l) override { listener_ = l; }
    /** Queues the default model's load and returns (submissions wait for it). */
    bool start() override;
    void stop() override;
    /**
     * Submits to the request's model, loading it first when it is not resident (waiting for
     * room under max_models). UNAVAILABLE when the load fails or the set is stopping.
     */
    bool submit(const worker_submission &sub, accepted_session &acc, start_error &err) override;
    void cancel(const std::string &session_id, uint64_t epoch) override;
    bool stream_open(uint64_t stream) override;
    /** Ready when the default model is (true while it is not resident: submit loads it). */
    bool wait_ready(std::chrono::milliseconds timeout) override;
    /**
     * Loads `model` as a submission would and sets its keep-alive; `keep_alive_ms` 0: unloads
     * it once idle (the default model stays), without loading it.
     */
    bool load_model(const std::string &model, int64_t keep_alive_ms, start_error &err) override;
    /** Renders on the request's model, loading it as submit does. */
    bool render(const worker_submission &sub, accepted_session &acc, start_error &err) override;
    /** Embeds on the default model. */
    bool embed(const embed_batch &job, std::vector<embedding> &out, start_error &err) override;
    /** The default model's facts (false while it is not resident or not loaded). */
    bool model_info(model_description &out) override;
    /** The default model's health (unreachable while it is not resident). */
    worker_health health() override;
    /** The default model's worker counters. */
    counters stats() override;
    std::vector<model_report> models() override;

  private:
    enum class residency { UNLOADED, LOADING, RESIDENT, UNLOADING };
    struct placed_session {
        uint64_t epoch = 0;
        // Set when its worker's stream ended: it counts as work until resubmitted or until
        // k_lost_grace passes (the resumer may fail it instead).
        std::chrono::steady_clock::time_point lost_at{};
    };
    struct slot {
        model m;
        std::shared_ptr<worker_client> client;  // set while LOADING (after start) or RESIDENT
        residency st  = residency::UNLOADED;
        uint64_t base = 0;                             // this load's stream base
        int32_t pins  = 0;                             // submissions in flight or waiting for it
        std::map<std::string, placed_session> placed;  // session id → its placement here
        int64_t keep_alive_ms = generate_request::k_keep_alive_unset;  // the last request's
        std::chrono::steady_clock::time_point last_used{};
        int32_t starts        = 0;
        int32_t load_failures = 0;  // loads that failed (their waiting submissions fail)
    };
    static constexpr int k_stream_shift   = 40;
    static constexpr auto k_lost_grace    = std::chrono::seconds(150);
    static constexpr auto k_reaper_period = std::chrono::milliseconds(100);

    // worker_listener, from the models' event threads
    void on_events(uint64_t stream, std::vector<worker_event> &batch) override;
    void on_stream_lost(uint64_t stream) override;

    // The slot a request's model names: an id, or "<id>:latest" (the default for a name none
    // has).
    size_t index_of(const std::string &id) const;
    // Pins slot `i` and makes it resident (loading it, making room first); its client, or null
    // with `err` (the pin is released then). Waits as long as it takes.
    std::shared_ptr<worker_client> acquire(size_t i, start_error &err);
    // Releases a pin taken by acquire.
    void release(size_t i);
    // Calls `call(client)` on model i's client once it is resident and ready (acquire, wait
    // for a restarting worker, release); false with `err` when it cannot be loaded.
    template <class F>
    bool on_model(size_t i, start_error &err, F &&call);
    // The loader thread: runs the loads queued in loads_, one at a time.
    void loader();
    // Loads slot `i` (state LOADING set by the caller, lk held on entry and on return).
    bool load(size_t i, std::unique_lock<std::mutex> &lk);
    // Unloads slot `i` (state UNLOADING set by the caller, lk held on entry and on return).
    void unload(size_t i, std::unique_lock<std::mutex> &lk, const char *why);
    // True when slot `i` has no work: no pin, no unfinished session (mu_ held; prunes losses).
    bool idle(slot &s, std::chrono::steady_clock::time_point now);
    // Models resident or on their way in or out (mu_ held).
    int occupied() const;
    // The idle resident slot used least recently, other than `except`; -1 when none (mu_ held).
    int eviction_candidate(size_t except, std::chrono::steady_clock::time_point now);
    // The keep-alive of slot `s` in ms (its last request's, else the server's) (mu_ held).
    int64_t keep_alive_ms(const slot &s) const;
    // The slot whose current load's stream is `stream`; -1 when none (mu_ held).
    int by_stream(uint64_t stream) const;
    void reaper();

    std::vector<slot> slots_;
    size_t default_ = 0;
    factory make_;
    options opts_;
    worker_listener *listener_ = nullptr;
    std::mutex listener_mu_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_          = false;
    bool loader_exit_   = false;  // set by stop() once every worker is stopped
    uint64_t next_load_ = 0;      // loads so far (each gets base (n + 1) << k_stream_shift)
    std::thread reaper_thread_;
    std::deque<size_t> loads_;   // slots (LOADING) for the loader thread to load
    std::thread loader_thread_;  // runs every load (a worker process's parent thread)
};

}  // namespace sf
