#include "journal/journal_writer.h"

#include <chrono>

#include "util/log.h"

namespace sf::journal {

writer::writer(std::unique_ptr<store> db) : db_(std::move(db)) {
    if (db_) thread_ = std::thread([this] { run(); });
}

writer::~writer() {
    stop();
}

void writer::submit(op o) {
    if (!db_) {
        if (o.done) o.done(true, "");
        return;
    }
    std::unique_lock lk(mu_);
    if (stop_) {
        lk.unlock();
        if (o.done) o.done(false, "the journal is closed");
        return;
    }
    queue_.push_back(std::move(o));
    // The running committer hands it on (lead(), run()); a holder commits it at release().
    if (committing_ || held_ > 0) return;
    lead(lk);
}

void writer::hold() {
    std::lock_guard lk(mu_);
    ++held_;
}

void writer::release() {
    std::unique_lock lk(mu_);
    if (--held_ > 0 || committing_ || queue_.empty()) {
        if (held_ == 0 && !queue_.empty()) cv_.notify_all();  // a committer is running: run()
        return;
    }
    lead(lk);
}

void writer::lead(std::unique_lock<std::mutex> &lk) {
    committing_ = true;
    std::deque<op> batch;
    batch.swap(queue_);
    lk.unlock();
    commit(batch);
    lk.lock();
    committing_ = false;
    // What arrived meanwhile goes to the writer thread: this caller has its own work.
    if (!queue_.empty() || stop_) cv_.notify_all();
}

void writer::stop() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void writer::run() {
    std::unique_lock lk(mu_);
    for (;;) {
        cv_.wait(lk, [&] { return !committing_ && held_ == 0 && (stop_ || !queue_.empty()); });
        if (queue_.empty() && stop_) return;
        lead(lk);
    }
}

void writer::commit(std::deque<op> &batch) {
    // Writes of a session that already failed are refused without touching the database.
    std::vector<op> ok_ops;
    ok_ops.reserve(batch.size());
    bool any_finish = false;
    for (auto &o : batch) {
        if (failed_.count(o.session)) {
            if (o.type == op::kind::FINISH) failed_.erase(o.session);  // its last write
            if (o.done) o.done(false, "an earlier write of this session failed");
            continue;
        }
        if (o.type == op::kind::FINISH) {
            o.rec.finished_ms = unix_ms();
            any_finish        = true;
        }
        ok_ops.push_back(std::move(o));
    }
    if (ok_ops.empty()) return;
    std::string err;
    bool ok = db_->write(ok_ops, err);
    if (!ok) {
        SF_LOG_ERROR("journal", "cannot write %zu records: %s", ok_ops.size(), err.c_str());
        // A failed session row needs no tracking: the session is refused, nothing follows it.
        for (const auto &o : ok_ops)
            if (o.type == op::kind::TOKEN) failed_.insert(o.session);
    }
    // Retention runs before the acknowledgements: whoever waits for a finish to be journaled
    // (a client's stream end) then sees the sessions it expired gone, never a stale state.
    if (ok && any_finish) {
        size_t n = db_->prune(unix_ms());
        if (n > 0) SF_LOG_DEBUG("journal", "retention removed %zu finished sessions", n);
    }
    for (auto &o : ok_ops) {
        if (o.type == op::kind::FINISH) failed_.erase(o.session);  // its last write
        if (o.done) o.done(ok, err);
    }
}

}  // namespace sf::journal
