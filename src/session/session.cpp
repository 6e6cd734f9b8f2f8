#include "session/session.h"

namespace sf {

void session::add_token(session_event ev) {
    {
        std::lock_guard lk(mu_);
        if (finished_) return;
        if (ev.cached_tokens > 0) cached_tokens_ = ev.cached_tokens;  // the first token's
        if (tokens_.empty()) first_token_at_ = std::chrono::steady_clock::now();
        tokens_.push_back(std::move(ev));
    }
    cv_.notify_all();
}

double session::ttft_s() const {
    std::lock_guard lk(mu_);
    if (first_token_at_ == std::chrono::steady_clock::time_point{}) return -1;
    return std::chrono::duration<double>(first_token_at_ - started_).count();
}

void session::finish(session_event ev) {
    {
        std::lock_guard lk(mu_);
        if (finished_) return;
        finished_ = std::move(ev);
    }
    cv_.notify_all();
}

bool session::read(size_t cursor, std::vector<session_event> &out,
                   std::optional<session_event> &finished,
                   std::chrono::milliseconds timeout) const {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, timeout, [&] { return tokens_.size() > cursor || finished_.has_value(); });
    bool any = false;
    for (size_t i = cursor; i < tokens_.size(); ++i) {
        out.push_back(tokens_[i]);
        any = true;
    }
    // Every token so far was copied above, so the finish (always last) may follow them.
    if (finished_) {
        finished = finished_;
        any      = true;
    }
    return any;
}

int32_t session::cached_tokens() const {
    std::lock_guard lk(mu_);
    return finished_ ? finished_->cached_tokens : cached_tokens_;
}

size_t session::token_count() const {
    std::lock_guard lk(mu_);
    return tokens_.size();
}

std::vector<token_id> session::token_ids() const {
    std::lock_guard lk(mu_);
    std::vector<token_id> ids;
    ids.reserve(tokens_.size());
    for (const auto &t : tokens_) ids.push_back(t.token);
    return ids;
}

bool session::cancel_requested() const {
    std::lock_guard lk(mu_);
    return cancel_requested_;
}

bool session::finished() const {
    std::lock_guard lk(mu_);
    return finished_.has_value();
}

void session::wait_tokens(size_t n) {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return tokens_.size() >= n || finished_.has_value(); });
}

void session::wait_finished() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return finished_.has_value(); });
}

void session::set_canceller(std::function<void()> fn) {
    bool cancel_now;
    {
        std::lock_guard lk(mu_);
        canceller_ = std::move(fn);
        cancel_now = cancel_requested_;
    }
    if (cancel_now && canceller_) canceller_();
}

void session::cancel() {
    std::function<void()> fn;
    {
        std::lock_guard lk(mu_);
        cancel_requested_ = true;
        fn                = canceller_;
    }
    if (fn) fn();
}

}  // namespace sf
