// The journal's group-commit thread: callers submit writes (a session row, a token, a finish);
// the thread commits whatever arrived since its last commit in one transaction, then runs
// each write's `done` callback in submission order — which is where a token becomes visible
// to clients, so no token is delivered before it is journaled. Never one fsync per token.
// Thread-safe: submit() from any thread; callbacks run on the writer thread.
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
    /** Commits what is queued and stops the thread (pending callbacks run). */
    void stop();

  private:
    void run();
    void commit(std::deque<op> &batch);

    std::unique_ptr<store> db_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<op> queue_;
    bool stop_ = false;
    std::set<std::string> failed_;  // sessions with a failed write (writer thread only)
    std::thread thread_;
};

}  // namespace sf::journal
