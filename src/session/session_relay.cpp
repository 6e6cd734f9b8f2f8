#include "session/session_relay.h"

#include <algorithm>

#include "util/log.h"

namespace sf {

session_relay::session_relay(worker_client &worker, journal::writer &journal,
                             latency_metrics &latency)
    : worker_(worker), journal_(journal), latency_(latency) {
    // Epochs grow across head restarts too, so a placement left running on a worker by an
    // earlier head is never taken for a new one.
    epoch_counter_.store(static_cast<uint64_t>(journal::unix_ms()) << 10);
}

std::shared_ptr<session_relay::entry> session_relay::find(const std::string &id) {
    std::lock_guard lk(mu_);
    auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : it->second;
}

uint64_t session_relay::prepare(const std::string &id) {
    std::shared_ptr<entry> e;
    {
        std::lock_guard lk(mu_);
        auto &slot = entries_[id];
        if (!slot) slot = std::make_shared<entry>();
        e = slot;
    }
    std::lock_guard lk(e->mu);
    const uint64_t epoch = next_epoch();
    e->epoch.store(epoch);
    give(*e, epoch);
    e->st = state::PENDING;
    e->ahead.clear();
    e->early.clear();
    e->finish.reset();
    return epoch;
}

void session_relay::activate(const std::shared_ptr<session> &s, const worker_submission &sub,
                             uint64_t stream, std::chrono::steady_clock::time_point t0) {
    auto e = find(s->id());
    if (!e) return;
    // The journal records where each placement ran (a move: a later epoch on another node).
    const std::string node = worker_.session_node(s->id());
    journal::op place;
    place.type    = journal::op::kind::PLACEMENT;
    place.session = s->id();
    place.placed  = {sub.epoch, node.empty() ? "local" : node,
                     static_cast<int64_t>(sub.resume_tokens.size()), journal::unix_ms()};
    journal_.submit(std::move(place));
    bool became_lost = false;
    {
        std::lock_guard lk(e->mu);
        if (e->st != state::PENDING) return;
        if (!e->s) {
            e->s          = s;
            e->t0         = t0;
            e->next_index = s->token_count();
        }
        e->sub = sub;
        e->sub.resume_tokens.clear();
        e->stream = stream;
        e->st     = state::ACTIVE;
        // What came before we knew the stream counts only if it came on that stream.
        for (auto &[from, ev] : e->early) {
            if (from != stream) {
                refused_.fetch_add(1, std::memory_order_relaxed);
                dropped_.fetch_add(1, std::memory_order_relaxed);
            } else if (!keep(*e, std::move(ev))) {
                dropped_.fetch_add(1, std::memory_order_relaxed);
            }
        }
        e->early.clear();
        became_lost = drain(*e);
        // The stream may have ended before we set `stream` (on_stream_lost then missed us).
        if (!became_lost && !worker_.stream_open(stream)) became_lost = lose(*e);
    }
    if (became_lost && on_lost_) on_lost_({s->id()});
}

void session_relay::drop(const std::string &id) {
    std::lock_guard lk(mu_);
    entries_.erase(id);
}

void session_relay::adopt(const std::shared_ptr<session> &s, const worker_submission &sub) {
    auto e        = std::make_shared<entry>();
    e->s          = s;
    e->sub        = sub;
    e->st         = state::LOST;
    e->next_index = s->token_count();
    e->t0         = std::chrono::steady_clock::now();
    if (sub.epoch != 0) give(*e, sub.epoch);
    {
        std::lock_guard lk(mu_);
        entries_[s->id()] = e;
    }
    if (on_lost_) on_lost_({s->id()});
}

void session_relay::adopt_failed(const std::shared_ptr<session> &s, session_event fe) {
    auto e = std::make_shared<entry>();
    e->s   = s;
    e->st  = state::LOST;
    {
        std::lock_guard lk(mu_);
        entries_[s->id()] = e;
    }
    std::lock_guard lk(e->mu);
    complete(*e, std::move(fe));
}

void session_relay::cancel(const std::string &id) {
    auto e = find(id);
    if (e) worker_.cancel(id, e->epoch.load());
}

std::optional<session_relay::lost_session> session_relay::lost(const std::string &id) {
    auto e = find(id);
    if (!e) return std::nullopt;
    std::lock_guard lk(e->mu);
    if (e->st != state::LOST) return std::nullopt;
    return lost_session{e->s, e->sub, e->next_index, e->losses};
}

void session_relay::lose_again(const std::string &id) {
    auto e = find(id);
    if (!e) return;
    {
        std::lock_guard lk(e->mu);
        if (e->st != state::PENDING) return;
        e->st = state::LOST;
        ++e->losses;
    }
    if (on_lost_) on_lost_({id});
}

void session_relay::fail(const std::string &id, const std::string &error) {
    auto e = find(id);
    if (!e) return;
    std::lock_guard lk(e->mu);
    if (e->st == state::DONE || !e->s) return;
    session_event fe;
    fe.type              = session_event::kind::FINISHED;
    fe.reason            = error.empty() ? finish_reason::CANCELLED : finish_reason::ERROR;
    fe.error             = error;
    fe.prompt_tokens     = e->s->prompt_tokens();
    fe.completion_tokens = static_cast<int32_t>(e->next_index);
    if (!error.empty()) SF_LOG_WARN("head", "session %s: %s", id.c_str(), error.c_str());
    complete(*e, std::move(fe));
}

void session_relay::on_events(uint64_t stream, std::vector<worker_event> &batch) {
    // One tick's tokens of every session are one journal commit.
    journal_.hold();
    std::vector<std::shared_ptr<entry>> touched;
    for (auto &we : batch) {
        auto e = find(we.session_id);
        if (!e) {
            if (ended_without(we.session_id, we.epoch))
                refused_.fetch_add(1, std::memory_order_relaxed);
            dropped_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        std::lock_guard lk(e->mu);
        const bool current =
            we.epoch == e->epoch.load() && (e->st == state::PENDING || e->st == state::ACTIVE);
        if (!current) {
            // A late event of an earlier placement is dropped; an epoch this session never had
            // is a node writing into a session it does not hold.
            if (!was_given(*e, we.epoch)) refused_.fetch_add(1, std::memory_order_relaxed);
            dropped_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        if (e->st == state::PENDING) {  // the stream is named by activate(); keep it for then
            if (e->early.size() < k_max_ahead) {
                e->early.emplace_back(stream, std::move(we.ev));
            } else {
                refused_.fetch_add(1, std::memory_order_relaxed);
                dropped_.fetch_add(1, std::memory_order_relaxed);
            }
            continue;
        }
        if (stream != e->stream || we.ev.index >= e->next_index + k_max_ahead) {
            refused_.fetch_add(1, std::memory_order_relaxed);
            dropped_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        if (!keep(*e, std::move(we.ev))) {
            dropped_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        if (touched.empty() || touched.back() != e) touched.push_back(e);
    }
    // The whole message first, then in order: events reordered within it wait for each other.
    std::vector<std::string> lost;
    for (auto &e : touched) {
        std::lock_guard lk(e->mu);
        if (e->st == state::ACTIVE && drain(*e)) lost.push_back(e->s->id());
    }
    journal_.release();
    if (!lost.empty() && on_lost_) on_lost_(lost);
}

void session_relay::on_stream_lost(uint64_t stream) {
    std::vector<std::shared_ptr<entry>> all;
    {
        std::lock_guard lk(mu_);
        for (auto &[id, e] : entries_) all.push_back(e);
    }
    std::vector<std::string> lost;
    for (auto &e : all) {
        std::lock_guard lk(e->mu);
        if (e->st == state::ACTIVE && e->stream == stream && lose(*e)) lost.push_back(e->s->id());
    }
    if (!lost.empty() && on_lost_) on_lost_(lost);
}

void session_relay::give(entry &e, uint64_t epoch) {
    if (e.given.size() >= k_max_epochs) e.given.erase(e.given.begin());
    e.given.push_back(epoch);
}

bool session_relay::was_given(const entry &e, uint64_t epoch) {
    return std::find(e.given.begin(), e.given.end(), epoch) != e.given.end();
}

bool session_relay::ended_without(const std::string &id, uint64_t epoch) {
    std::lock_guard lk(mu_);
    auto it = ended_.find(id);
    return it != ended_.end() &&
           std::find(it->second.begin(), it->second.end(), epoch) == it->second.end();
}

bool session_relay::keep(entry &e, session_event &&ev) {
    if (ev.type == session_event::kind::FINISHED) {
        if (e.finish) return false;
        e.finish = std::move(ev);
        return true;
    }
    if (ev.index < e.next_index || e.ahead.count(ev.index)) return false;
    e.ahead.emplace(ev.index, std::move(ev));
    return true;
}

bool session_relay::drain(entry &e) {
    while (!e.ahead.empty() && e.ahead.begin()->first == e.next_index) {
        session_event ev = std::move(e.ahead.begin()->second);
        e.ahead.erase(e.ahead.begin());
        journal_token(e, std::move(ev));
    }
    if (!e.finish) return false;
    if (e.finish->reason == finish_reason::CANCELLED && !e.s->cancel_requested() &&
        !shutting_down_.load()) {
        // Nobody asked: the worker is stopping (SIGTERM, its parent died). A loss, not an end.
        SF_LOG_WARN("head", "session %s: the worker ended it unasked at token %zu; moving it",
                    e.s->id().c_str(), e.next_index);
        unasked_ends_.fetch_add(1, std::memory_order_relaxed);
        return lose(e);
    }
    if (e.next_index < static_cast<size_t>(std::max(0, e.finish->completion_tokens))) {
        // The worker finished, but a token before its end never arrived: generate it again.
        SF_LOG_WARN("head", "session %s: token %zu of %d never arrived; resubmitting",
                    e.s->id().c_str(), e.next_index, e.finish->completion_tokens);
        return lose(e, /*worker_failed=*/false);
    }
    session_event fe = std::move(*e.finish);
    e.finish.reset();
    complete(e, std::move(fe));
    return false;
}

void session_relay::journal_token(entry &e, session_event ev) {
    // Latency as the head sees it: TTFT from the request reaching us, then gaps.
    const auto now = std::chrono::steady_clock::now();
    const auto cls = e.sub.request.cls;
    if (e.last_token_at == std::chrono::steady_clock::time_point{}) {
        latency_.observe_ttft(cls, std::chrono::duration<double>(now - e.t0).count());
    } else {
        latency_.observe_itl(cls, std::chrono::duration<double>(now - e.last_token_at).count());
    }
    e.last_token_at = now;
    ++e.next_index;
    journal::op o;
    o.type    = journal::op::kind::TOKEN;
    o.session = e.s->id();
    o.ev      = ev;
    o.done    = [s = e.s, ev = std::move(ev)](bool ok, const std::string &err) mutable {
        if (ok) return s->add_token(std::move(ev));
        // Never deliver a token that is not journaled: the session ends here.
        session_event fe;
        fe.type          = session_event::kind::FINISHED;
        fe.reason        = finish_reason::ERROR;
        fe.error         = "the token journal cannot be written (" + err + "); generation stopped";
        fe.prompt_tokens = s->prompt_tokens();
        fe.completion_tokens = static_cast<int32_t>(s->token_count());
        s->finish(std::move(fe));
        s->cancel();
    };
    journal_.submit(std::move(o));
}

void session_relay::complete(entry &e, session_event fe) {
    e.st = state::DONE;
    e.ahead.clear();
    auto s = e.s;
    s->set_canceller(nullptr);
    {
        std::lock_guard lk(mu_);
        auto it = entries_.find(s->id());
        if (it != entries_.end() && it->second.get() == &e) entries_.erase(it);
        // Its epochs stay known: a node writing into it later is refused, not just dropped.
        if (ended_.emplace(s->id(), e.given).second) ended_order_.push_back(s->id());
        while (ended_order_.size() > k_max_ended) {
            ended_.erase(ended_order_.front());
            ended_order_.pop_front();
        }
    }
    // Cut short by a shutdown: left unfinished in the journal, to be resumed at the next start.
    if (shutting_down_.load() && fe.reason != finish_reason::STOP &&
        fe.reason != finish_reason::LENGTH) {
        s->finish(std::move(fe));
        if (on_finished_) on_finished_(s->id());
        return;
    }
    journal::op o;
    o.type    = journal::op::kind::FINISH;
    o.session = s->id();
    o.ev      = fe;
    o.done = [s, fe = std::move(fe), done = on_finished_](bool ok, const std::string &err) mutable {
        if (!ok && fe.reason != finish_reason::ERROR) {
            fe.reason = finish_reason::ERROR;
            fe.error  = "the token journal cannot be written (" + err + ")";
        }
        s->finish(std::move(fe));
        if (done) done(s->id());
    };
    journal_.submit(std::move(o));
}

bool session_relay::lose(entry &e, bool worker_failed) {
    if (e.st != state::ACTIVE) return false;
    e.st = state::LOST;
    e.ahead.clear();
    e.early.clear();
    e.finish.reset();
    // A gap in a stream that kept going is repaired by resubmitting; only a stream that keeps
    // dropping events (k_max_repairs) counts against the session like a failed worker.
    if (worker_failed || ++e.repairs > k_max_repairs) ++e.losses;
    return true;
}

}  // namespace sf
