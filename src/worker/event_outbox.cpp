#include "worker/event_outbox.h"

namespace sf {

bool event_outbox::bind(const std::string &session_id, uint64_t epoch,
                        std::shared_ptr<event_channel> channel) {
    std::shared_ptr<event_channel> replaced;
    {
        std::lock_guard lk(mu_);
        if (closed_) return false;
        auto &b = bound_[session_id];
        // A newer placement of the same session (the head resubmitted it): the older one's
        // sequence is cancelled; its remaining events carry the older epoch and are dropped.
        if (b.channel && b.epoch != epoch) replaced = std::move(b.channel);
        b = binding{epoch, std::move(channel)};
    }
    if (replaced) replaced->cancel();
    return true;
}

void event_outbox::deliver(const std::string &session_id, uint64_t epoch, session_event ev) {
    std::lock_guard lk(mu_);
    if (ev.type == session_event::kind::FINISHED) {
        auto it = bound_.find(session_id);
        if (it != bound_.end() && it->second.epoch == epoch) bound_.erase(it);
    }
    if (closed_) return;  // nobody reads them; the head resumes its sessions elsewhere
    if (ev.type == session_event::kind::TOKEN && ev.index == 0) first_token_ = true;
    queue_.push_back(outbox_event{session_id, epoch, std::move(ev)});
}

void event_outbox::flush() {
    uint64_t mine = 0;
    bool wait     = false;
    {
        std::lock_guard lk(mu_);
        if (queue_.empty()) return;
        flushed_     = true;
        mine         = ++flushes_;
        wait         = first_token_;
        first_token_ = false;
    }
    cv_.notify_one();
    if (!wait) return;
    // A session's first token: let the writer send it before the next decode takes the cores.
    std::unique_lock lk(mu_);
    written_cv_.wait_for(lk, k_first_token_wait, [&] { return written_ >= mine || closed_; });
}

bool event_outbox::take(std::vector<outbox_event> &out, std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    // Without a flush (an event queued outside a tick), the timeout sends what is there.
    cv_.wait_for(lk, timeout, [&] { return flushed_ || closed_; });
    flushed_ = false;
    if (queue_.empty()) return false;
    taken_ = flushes_;
    out.swap(queue_);
    queue_.clear();
    return true;
}

void event_outbox::written() {
    {
        std::lock_guard lk(mu_);
        written_ = taken_;
    }
    written_cv_.notify_all();
}

void event_outbox::close() {
    std::map<std::string, binding> bound;
    {
        std::lock_guard lk(mu_);
        closed_ = true;
        bound.swap(bound_);
        queue_.clear();
    }
    cv_.notify_all();
    written_cv_.notify_all();
    for (auto &[id, b] : bound) b.channel->cancel();
}

bool event_outbox::cancel(const std::string &session_id, uint64_t epoch) {
    std::lock_guard lk(mu_);
    auto it = bound_.find(session_id);
    if (it == bound_.end() || (epoch != 0 && it->second.epoch != epoch)) return false;
    it->second.channel->cancel();
    return true;
}

void event_outbox::unbind(const std::string &session_id, uint64_t epoch) {
    std::lock_guard lk(mu_);
    auto it = bound_.find(session_id);
    if (it != bound_.end() && it->second.epoch == epoch) bound_.erase(it);
}

bool event_outbox::closed() {
    std::lock_guard lk(mu_);
    return closed_;
}

}  // namespace sf
