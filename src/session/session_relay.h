// The relay: a worker's events → the journal → the session (and its readers), exactly once
// per (session, index), in index order, whatever the event stream does. Events of a session's
// earlier placement (another epoch) are dropped; duplicates are dropped; events that arrive out
// of order wait for the gap to fill (at most k_max_ahead of them); a finish that arrives while a
// token before it is missing (dropped), a cancel or error the head did not ask for (a worker
// that is stopping ends its sequences that way), or the end of the stream carrying the
// placement, makes the session *lost*: it goes to the resumer (session_resumer.h), which
// resubmits it from what the journal holds. A session ends only as its client or its model
// ends it. Events are taken only from the event stream the current placement was accepted on:
// a node that held a session once cannot write into it after it moved (they are dropped and
// counted, `dropped()`). An event under an epoch the head never gave the session (a node
// guessing one: epochs come from one counter) is refused (`refused()`), whatever the session's
// state, ended too (the epochs of the latest k_max_ended ended sessions are kept); one under an
// earlier epoch of its own is a late event of a lost placement, dropped.
//
// Threads: on_events / on_stream_lost run on the worker client's event thread; prepare,
// activate and drop on the thread that submits (an HTTP handler in start(), the resumer);
// cancel on any thread (a client going away). A global mutex guards the map of entries (a
// leaf lock, never held while an entry's mutex is taken); each entry's mutex guards its state
// and is held while its tokens are handed to the journal, so one session's journal writes
// keep their order. Journal callbacks may run inline (when the writer is idle or off): they
// only touch the session and never an entry's mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "journal/journal_writer.h"
#include "session/latency_metrics.h"
#include "session/session.h"
#include "session/worker_client.h"

namespace sf {

class session_relay final : public worker_listener {
  public:
    /** `worker`, `journal` and `latency` must outlive the relay. */
    session_relay(worker_client &worker, journal::writer &journal, latency_metrics &latency);

    /**
     * Where lost sessions go (the resumer's queue); called outside the relay's locks, once with
     * every session a lost stream or one message lost, so they are resubmitted together.
     */
    void set_on_lost(std::function<void(const std::vector<std::string> &ids)> fn) {
        on_lost_ = std::move(fn);
    }
    /** Called once a session's end is committed (or given up), to forget it as running. */
    void set_on_finished(std::function<void(const std::string &id)> fn) {
        on_finished_ = std::move(fn);
    }

    /**
     * Before submitting a placement of session `id`: a fresh epoch (put it in the submission)
     * whose events are kept from now on and handed out once activate() is called. Creates the
     * entry of a new session. Returns the epoch (> 0).
     */
    uint64_t prepare(const std::string &id);
    /**
     * The placement was accepted on event stream `stream`: its events flow to `s` (the first
     * activation attaches `s`, later ones must pass the same). `sub` is what a resubmission
     * sends again (resume tokens cleared), `t0` when the request arrived (for TTFT). When the
     * stream has already ended, the session is lost at once.
     */
    void activate(const std::shared_ptr<session> &s, const worker_submission &sub, uint64_t stream,
                  std::chrono::steady_clock::time_point t0);
    /** A new session's submission failed: forget it. */
    void drop(const std::string &id);
    /**
     * A session read back from the journal (head restart) with its tokens so far: it is lost
     * (nothing runs it) and goes to the resumer.
     */
    void adopt(const std::shared_ptr<session> &s, const worker_submission &sub);
    /** A journaled session that cannot be resubmitted: journals its end `fe` at once. */
    void adopt_failed(const std::shared_ptr<session> &s, session_event fe);
    /** The client went away: cancels the running placement on the worker. */
    void cancel(const std::string &id);

    /** What the resumer needs of a lost session; nullopt when it is not lost (any more). */
    struct lost_session {
        std::shared_ptr<session> s;
        worker_submission sub;  // epoch and resume tokens still to set
        size_t next_index = 0;  // tokens handed to the journal so far
        int losses        = 0;  // times a placement of it was lost
    };
    std::optional<lost_session> lost(const std::string &id);
    /** The resumer could not place a lost session again now: counted as another loss. */
    void lose_again(const std::string &id);
    /**
     * Ends a session that is not running: CANCELLED when `error` is empty, else ERROR with
     * it. Journaled unless the server is shutting down (then it resumes at the next start).
     */
    void fail(const std::string &id, const std::string &error);

    /** From now on finishes of cancelled sessions are not journaled (they resume later). */
    void set_shutting_down() { shutting_down_.store(true); }

    // worker_listener (the event thread)
    void on_events(uint64_t stream, std::vector<worker_event> &batch) override;
    void on_stream_lost(uint64_t stream) override;

    /** Events dropped so far: of another epoch, duplicated, or for no running session. */
    uint64_t dropped() const { return dropped_.load(); }
    /**
     * Of those, events a node wrote into a session it does not hold: under an epoch never given
     * to the session, under its current epoch on another node's stream than the one the
     * placement runs on, or too far ahead of the next index (k_max_ahead).
     */
    uint64_t refused() const { return refused_.load(); }
    /** Sessions whose worker ended them unasked (a stopping worker's cancel): moved, not ended. */
    uint64_t unasked_ends() const { return unasked_ends_.load(); }

    /** Out-of-order events kept per session at most; beyond it they are dropped as refused. */
    static constexpr uint32_t k_max_ahead = 4096;
    /** Epochs remembered per session (its latest placements); older ones read as never given. */
    static constexpr size_t k_max_epochs = 256;
    /** Ended sessions whose epochs are remembered (the latest); events for older ones are dropped.
     */
    static constexpr size_t k_max_ended = 4096;

  private:
    enum class state { PENDING, ACTIVE, LOST, DONE };
    struct entry {
        std::mutex mu;
        std::atomic<uint64_t> epoch{0};  // the current placement's (read by cancel unlocked)
        std::vector<uint64_t> given;     // epochs given to this session, oldest first (bounded)
        state st = state::PENDING;
        std::shared_ptr<session> s;
        worker_submission sub;
        uint64_t stream   = 0;
        size_t next_index = 0;                    // the next token index to journal
        std::map<uint32_t, session_event> ahead;  // arrived, not yet in order
        // Events that arrived before activate() named the stream (PENDING), with their stream.
        std::vector<std::pair<uint64_t, session_event>> early;
        std::optional<session_event> finish;  // arrived, waiting for its tokens
        std::chrono::steady_clock::time_point t0, last_token_at;
        int losses  = 0;
        int repairs = 0;  // resubmissions to fill a gap in the events
    };
    std::shared_ptr<entry> find(const std::string &id);
    // Remembers that `epoch` was given to the session (entry locked).
    static void give(entry &e, uint64_t epoch);
    // Whether `epoch` was given to the session (entry locked).
    static bool was_given(const entry &e, uint64_t epoch);
    // Whether `id` is a remembered ended session that was never given `epoch` (takes mu_).
    bool ended_without(const std::string &id, uint64_t epoch);
    // Keeps one event of the current placement (entry locked). False when it was a duplicate.
    bool keep(entry &e, session_event &&ev);
    // Hands the tokens that are next in order to the journal, then the finish once every
    // token before it was; a finish with a token missing before it loses the placement.
    // Entry locked; returns true when the session became lost.
    bool drain(entry &e);
    void journal_token(entry &e, session_event ev);
    // Journals the end and forgets the entry (entry locked).
    void complete(entry &e, session_event fe);
    // Marks the placement lost (entry locked); true when it was running until now.
    // `worker_failed`: the stream ended (counted as a loss), else a gap was found (a repair).
    bool lose(entry &e, bool worker_failed = true);
    static constexpr int k_max_repairs = 16;
    uint64_t next_epoch() { return epoch_counter_.fetch_add(1) + 1; }

    worker_client &worker_;
    journal::writer &journal_;
    latency_metrics &latency_;
    std::function<void(const std::vector<std::string> &)> on_lost_;
    std::function<void(const std::string &)> on_finished_;
    std::atomic<bool> shutting_down_{false};
    std::atomic<uint64_t> epoch_counter_{0};
    std::atomic<uint64_t> dropped_{0};
    std::atomic<uint64_t> refused_{0};
    std::atomic<uint64_t> unasked_ends_{0};
    std::mutex mu_;  // guards entries_, ended_ and ended_order_ only
    std::map<std::string, std::shared_ptr<entry>> entries_;
    // The epochs given to sessions that ended, the latest k_max_ended of them (oldest first in
    // ended_order_), so a node writing into an ended session is refused too.
    std::map<std::string, std::vector<uint64_t>> ended_;
    std::deque<std::string> ended_order_;
};

}  // namespace sf
