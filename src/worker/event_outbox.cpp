#include "worker/event_outbox.h"

namespace sf {

bool event_outbox::bind(const std::string &session_id, std::shared_ptr<event_channel> channel) {
    std::lock_guard lk(mu_);
    if (closed_) return false;
    bound_[session_id] = std::move(channel);
    return true;
}

void event_outbox::deliver(const std::string &session_id, session_event ev) {
    std::lock_guard lk(mu_);
    if (ev.type == session_event::kind::FINISHED) bound_.erase(session_id);
    if (closed_) return;  // nobody reads them; the head resumes its sessions elsewhere
    queue_.emplace_back(session_id, std::move(ev));
}

void event_outbox::flush() {
    {
        std::lock_guard lk(mu_);
        if (queue_.empty()) return;
        flushed_ = true;
    }
    cv_.notify_one();
}

bool event_outbox::take(std::vector<std::pair<std::string, session_event>> &out,
                        std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    // Without a flush (an event queued outside a tick), the timeout sends what is there.
    cv_.wait_for(lk, timeout, [&] { return flushed_ || closed_; });
    flushed_ = false;
    if (queue_.empty()) return false;
    out.swap(queue_);
    queue_.clear();
    return true;
}

void event_outbox::close() {
    std::map<std::string, std::shared_ptr<event_channel>> bound;
    {
        std::lock_guard lk(mu_);
        closed_ = true;
        bound.swap(bound_);
        queue_.clear();
    }
    cv_.notify_all();
    for (auto &[id, ch] : bound) ch->cancel();
}

bool event_outbox::cancel(const std::string &session_id) {
    std::lock_guard lk(mu_);
    auto it = bound_.find(session_id);
    if (it == bound_.end()) return false;
    it->second->cancel();
    return true;
}

void event_outbox::unbind(const std::string &session_id) {
    std::lock_guard lk(mu_);
    bound_.erase(session_id);
}

bool event_outbox::closed() {
    std::lock_guard lk(mu_);
    return closed_;
}

}  // namespace sf
