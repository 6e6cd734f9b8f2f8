// The journal's group commit: callers submit writes (a session row, a token, a finish); one
// committer at a time commits whatever arrived since the last commit in one transaction, then
// runs each write's `done` callback in submission order — which is where a token becomes
// visible to clients, so no token is delivered before it is journaled. Never one fsync per
// token. The committer is the submitting thread itself when no commit is running (a leader,
// as in RocksDB's write groups): a token then costs no thread hop on its way to the client,
// which on a 2-core machine busy with decoding was ~4 % of single-stream tokens/s. Writes
// that arrive during a commit are handed to the writer thread, so a submitter commits at most
// one batch. Thread-safe: submit() from any thread; callbacks run on the committing thread,
// never under the writer's lock (a callback may submit again).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "journal/journal_store.h"

namespace sf::journal {

class writer {
  public:
    /** `db` may be null: journaling is off and submit() runs `done(true)` at once. */
    explicit writer(std::unique_ptr<store> db);
    ~writer();

    bool enabled() const { return db_ != nullptr; }
    /** The database (null when journaling is off); its read functions are thread-safe. */
    store *db() { return db_.get(); }

    /**
     * Queues `o`; `o.done(ok, error)` runs once it is committed (ok) or could not be (the
     * transaction failed, e.g. disk full or I/O error). After a failure, every later write
     * of the same session fails too, so its tokens stay contiguous from 0.
     */
    void submit(op o);
    /**
     * Between hold() and release(), submit() only queues; release() then commits everything
     * queued on its own thread, in one transaction. The head's event reader holds the writer
     * while it hands out one message of the worker (a tick's tokens of every session), so a
     * tick costs one commit. Calls nest; callbacks never run under hold.
     */
    void hold();
    void release();
    /** Commits what is queued, waits for a running commit and stops the thread (pending
     * callbacks run). */
    void stop();

  private:
    void run();
    void commit(std::deque<op> &batch);
    // Commits the queue on the calling thread (lock held on entry and exit); then hands what
    // arrived meanwhile to the writer thread.
    void lead(std::unique_lock<std::mutex> &lk);

    std::unique_ptr<store> db_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<op> queue_;
    bool stop_       = false;
    bool committing_ = false;       // a thread (leader or the writer) is in commit()
    int held_        = 0;           // hold() calls not yet released
    std::set<std::string> failed_;  // sessions with a failed write (the committer only)
    std::thread thread_;
};

}  // namespace sf::journal
