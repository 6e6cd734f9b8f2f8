#include "session/worker_events.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "util/log.h"

namespace sf {

namespace pb = superfluid::worker::v1;

void event_mailbox::push(pb::GenerateEvent ev) {
    {
        std::lock_guard lk(mu_);
        // Under the reader's journal hold: the handler only queues the token's write.
        if (on_token_ && !draining_ && ev.has_token()) return on_token_(*ev.mutable_token());
        q_.push_back(std::move(ev));
    }
    cv_.notify_one();
}

void event_mailbox::set_token_handler(token_handler fn) {
    std::unique_lock lk(mu_);
    on_token_ = std::move(fn);
    draining_ = true;  // push() queues meanwhile, so the order stays
    // The tokens that came first (ahead of the call's answer), in order, outside the lock: the
    // handler may commit and run callbacks that reach this mailbox (a cancel). A queued finish
    // stays for next().
    for (;;) {
        std::vector<pb::GenerateEvent> tokens;
        std::deque<pb::GenerateEvent> rest;
        for (auto &ev : q_)
            (ev.has_token() ? tokens.emplace_back() : rest.emplace_back()) = std::move(ev);
        q_.swap(rest);
        if (tokens.empty()) break;
        lk.unlock();
        for (auto &ev : tokens) on_token_(*ev.mutable_token());
        lk.lock();
    }
    draining_ = false;
}

void event_mailbox::lose() {
    {
        std::lock_guard lk(mu_);
        lost_ = true;
    }
    cv_.notify_all();
}

void event_mailbox::interrupt() {
    {
        std::lock_guard lk(mu_);
        interrupted_ = true;
    }
    cv_.notify_all();
}

bool event_mailbox::next(pb::GenerateEvent &ev) {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return !q_.empty() || lost_ || interrupted_; });
    if (interrupted_ || q_.empty()) return false;
    ev = std::move(q_.front());
    q_.pop_front();
    return true;
}

bool event_mailbox::lost() {
    std::lock_guard lk(mu_);
    return lost_;
}

worker_events::~worker_events() {
    stop();
}

void worker_events::start() {
    thread_ = std::thread([this] { run(); });
}

void worker_events::stop() {
    std::shared_ptr<grpc::ClientContext> call;
    {
        std::lock_guard lk(mu_);
        stop_ = true;
        call  = call_;
    }
    cv_.notify_all();
    if (call) call->TryCancel();
    if (thread_.joinable()) thread_.join();
}

std::shared_ptr<event_mailbox> worker_events::open(const std::string &session_id) {
    auto box = std::make_shared<event_mailbox>();
    std::lock_guard lk(mu_);
    boxes_[session_id] = entry{box, 0};
    return box;
}

void worker_events::bind(const std::shared_ptr<event_mailbox> &box, uint64_t stream_id) {
    bool dead;
    {
        std::lock_guard lk(mu_);
        dead = stream_id != reading_;
        for (auto &[id, e] : boxes_)
            if (e.box == box) e.stream_id = stream_id;
    }
    if (dead) box->lose();
}

void worker_events::close(const std::string &session_id,
                          const std::shared_ptr<event_mailbox> &box) {
    std::lock_guard lk(mu_);
    auto it = boxes_.find(session_id);
    if (it != boxes_.end() && it->second.box == box) boxes_.erase(it);
}

void worker_events::run() {
    uint64_t next_id = 1;
    int failures     = 0;  // Events calls in a row that ended without a message
    for (;;) {
        auto call = std::make_shared<grpc::ClientContext>();
        call->set_wait_for_ready(true);  // a (re)starting worker: wait for its socket
        const uint64_t id = next_id++;
        {
            std::lock_guard lk(mu_);
            if (stop_) return;
            call_    = call;
            reading_ = id;
        }
        pb::EventsRequest req;
        req.set_stream_id(id);
        auto reader = stub_->Events(call.get(), req);
        pb::EventBatch batch;
        bool read_any = false;
        while (reader->Read(&batch)) {
            read_any = true;
            batches_.fetch_add(1, std::memory_order_relaxed);
            events_.fetch_add(static_cast<uint64_t>(batch.events_size()),
                              std::memory_order_relaxed);
            if (around_batch_) around_batch_(true);
            {
                std::lock_guard lk(mu_);
                for (auto &ev : *batch.mutable_events()) {
                    const std::string &sid =
                        ev.has_token() ? ev.token().session_id() : ev.finished().session_id();
                    auto it = boxes_.find(sid);
                    if (it != boxes_.end()) it->second.box->push(std::move(ev));
                }
            }
            if (around_batch_) around_batch_(false);
        }
        const grpc::Status st = reader->Finish();
        std::vector<std::shared_ptr<event_mailbox>> lost;
        {
            std::lock_guard lk(mu_);
            reading_ = 0;
            call_.reset();
            for (auto &[sid, e] : boxes_)
                if (e.stream_id == id) lost.push_back(e.box);
        }
        for (auto &b : lost) b->lose();
        if (!lost.empty() || !st.ok())
            SF_LOG_DEBUG("head", "events stream %llu ended (%s); %zu sessions to resume",
                         static_cast<unsigned long long>(id), st.error_message().c_str(),
                         lost.size());
        // A pause before reopening: short after a stream that carried events (a restarted
        // worker should get its stream back at once), growing to 2 s while calls keep failing
        // without one (a worker that refuses the call is not hammered; sessions then stream on
        // their own Generate calls).
        failures         = read_any ? 0 : std::min(failures + 1, 6);
        const auto pause = std::chrono::milliseconds(failures == 0 ? 50 : 50 << (failures - 1));
        std::unique_lock lk(mu_);
        if (cv_.wait_for(lk, std::min(pause, std::chrono::milliseconds(2000)),
                         [&] { return stop_; }))
            return;
    }
}

}  // namespace sf
