#include "placement/node_pool.h"

#include <algorithm>

#include "placement/placement_policy.h"
#include "util/log.h"

namespace sf {

node_pool::~node_pool() {
    stop();
}

void node_pool::retire(std::shared_ptr<node> n) {
    if (n && n->client) n->client->stop();
}

void node_pool::add_node(const std::string &name, const std::string &address, factory make,
                         bool reference) {
    std::shared_ptr<node> old, fresh;
    bool start_now = false;
    {
        std::lock_guard lk(mu_);
        auto it = std::find_if(nodes_.begin(), nodes_.end(),
                               [&](const auto &n) { return n->name == name; });
        if (it != nodes_.end() && (*it)->address == address) return;
        fresh            = std::make_shared<node>();
        fresh->name      = name;
        fresh->address   = address;
        fresh->reference = reference;
        fresh->base      = (++next_base_) << k_stream_shift;
        fresh->client    = make(fresh->base);
        fresh->client->set_listener(this);
        if (it != nodes_.end()) {
            old = *it;
            *it = fresh;
        } else {
            nodes_.push_back(fresh);
        }
        start_now = started_;
    }
    if (old) {
        SF_LOG_INFO("cluster", "node %s moved from %s to %s", name.c_str(), old->address.c_str(),
                    address.c_str());
        retire(old);
    } else if (!address.empty()) {
        SF_LOG_INFO("cluster", "node %s registered at %s", name.c_str(), address.c_str());
    }
    if (start_now) fresh->client->start();
}

node_report node_pool::heartbeat(const std::string &name, const std::string &certificate_serial) {
    std::lock_guard lk(mu_);
    node_report r;
    for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
        auto &n = **it;
        if (n.name != name) continue;
        r.name    = n.name;
        r.address = n.address;
        r.message = n.message;
        r.state   = n.st == node_state::REFUSED  ? "refused"
                    : n.st == node_state::ACTIVE ? "active"
                                                 : "pending";
        if (n.st == node_state::REFUSED) {
            nodes_.erase(it);  // already stopped; a restarted guest is checked afresh
        } else {
            n.last_seen = std::chrono::steady_clock::now();
            n.seen      = true;
            if (!certificate_serial.empty()) n.serial = certificate_serial;
        }
        break;
    }
    return r;
}

bool node_pool::revoke(const std::string &name, const std::string &serial, const std::string &why) {
    std::shared_ptr<node> gone;
    size_t sessions = 0;
    {
        std::lock_guard lk(mu_);
        for (auto &n : nodes_) {
            if (n->name != name || n->reference || n->st == node_state::REFUSED) continue;
            if (!serial.empty() && !n->serial.empty() && n->serial != serial) continue;
            n->st      = node_state::REFUSED;
            n->message = why;
            gone       = n;
            for (auto &[id, p] : placed_) sessions += p.base == n->base;
            // A lost node sends no more registrations (which forget a refused one): drop it now.
            if (lost(*n, std::chrono::steady_clock::now()))
                nodes_.erase(std::find(nodes_.begin(), nodes_.end(), gone));
            break;
        }
    }
    if (!gone) return false;
    SF_LOG_WARN("cluster", "node %s revoked (%s): its %zu sessions move to other nodes",
                name.c_str(), why.c_str(), sessions);
    retire(gone);  // its Events stream ends: on_stream_lost resumes the sessions elsewhere
    return true;
}

bool node_pool::leave(const std::string &name, const std::string &serial) {
    std::shared_ptr<node> gone;
    size_t sessions = 0;
    {
        std::lock_guard lk(mu_);
        for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
            auto &n = **it;
            if (n.name != name || n.reference) continue;
            if (!serial.empty() && !n.serial.empty() && n.serial != serial) continue;
            for (auto &[id, p] : placed_) sessions += p.base == n.base;
            gone = *it;
            nodes_.erase(it);
            break;
        }
    }
    if (!gone) return false;
    SF_LOG_INFO("cluster", "node %s is leaving: its %zu sessions move to other nodes", name.c_str(),
                sessions);
    retire(gone);  // its Events stream ends: on_stream_lost resumes the sessions elsewhere
    return true;
}

std::string node_pool::session_node(const std::string &session_id) {
    std::lock_guard lk(mu_);
    auto it = placed_.find(session_id);
    if (it == placed_.end()) return "";
    for (auto &n : nodes_)
        if (n->base == it->second.base) return n->name;
    return "";
}

bool node_pool::start() {
    std::vector<std::shared_ptr<node>> todo;
    {
        std::lock_guard lk(mu_);
        started_ = true;
        todo     = nodes_;
    }
    bool ok = true;
    for (auto &n : todo) ok = n->client->start() && ok;
    monitor_thread_ = std::thread([this] { monitor(); });
    return ok;
}

void node_pool::stop() {
    std::vector<std::shared_ptr<node>> todo;
    {
        std::lock_guard lk(mu_);
        if (stop_) return;
        stop_ = true;
        todo  = nodes_;
    }
    cv_.notify_all();
    if (monitor_thread_.joinable()) monitor_thread_.join();
    for (auto &n : todo) retire(n);
}

bool node_pool::usable(const node &n) const {
    return n.st == node_state::ACTIVE && n.last.reachable && n.last.status.ready;
}

std::vector<std::shared_ptr<node_pool::node>> node_pool::usable_nodes() {
    std::lock_guard lk(mu_);
    std::vector<std::shared_ptr<node>> out;
    for (auto &n : nodes_)
        if (usable(*n)) out.push_back(n);
    return out;
}

std::shared_ptr<node_pool::node> node_pool::by_stream(uint64_t stream) {
    const uint64_t base = (stream >> k_stream_shift) << k_stream_shift;
    std::lock_guard lk(mu_);
    for (auto &n : nodes_)
        if (n->base == base) return n;
    return nullptr;
}

bool node_pool::submit(const worker_submission &sub, accepted_session &acc, start_error &err) {
    std::vector<uint64_t> tried;
    const std::vector<uint64_t> chain = prefix_chain(sub.request);
    placement_request req;
    req.interactive = sub.request.cls == priority_class::INTERACTIVE;
    req.chunks      = chain.size();
    for (;;) {
        std::shared_ptr<node> n;
        {
            std::lock_guard lk(mu_);
            std::vector<node_load> loads;
            for (auto &c : nodes_) {
                node_load l;
                l.usable =
                    usable(*c) && std::find(tried.begin(), tried.end(), c->base) == tried.end();
                l.slots   = c->last.status.n_parallel;
                l.waiting = c->last.status.waiting_sessions;
                l.running = c->submitting;
                for (auto &[id, p] : placed_) l.running += p.base == c->base;
                const auto &classes = c->last.status.classes;
                l.batch             = classes.size() > 2 ? classes[2].running : 0;
                l.affinity          = affinity_.match(c->base, chain);
                loads.push_back(l);
            }
            const int i = pick_node(loads, req);
            if (i >= 0) {
                n = nodes_[static_cast<size_t>(i)];
                ++n->submitting;  // concurrent submits see it taken
            }
        }
        if (!n) {
            if (err.message.empty()) {
                err.type    = start_error::kind::UNAVAILABLE;
                err.message = "no inference node is available; retry shortly";
            }
            return false;
        }
        const bool ok = n->client->submit(sub, acc, err);
        std::lock_guard lk(mu_);
        --n->submitting;
        if (ok) {
            auto early = finished_early_.find(sub.session_id);
            if (early != finished_early_.end() && early->second == sub.epoch)
                finished_early_.erase(early);  // over already: not running anywhere
            else
                placed_[sub.session_id] = {n->base, sub.epoch};
            ++n->placed_total;
            const size_t held = affinity_.match(n->base, chain);
            affinity_.record(n->base, chain);
            SF_LOG_DEBUG("cluster",
                         "session %s (epoch %llu) placed on %s (%zu of %zu prefix chunks held)",
                         sub.session_id.c_str(), static_cast<unsigned long long>(sub.epoch),
                         n->name.c_str(), held, chain.size());
            return true;
        }
        if (err.type != start_error::kind::UNAVAILABLE) return false;
        tried.push_back(n->base);
    }
}

void node_pool::cancel(const std::string &session_id, uint64_t epoch) {
    std::vector<std::shared_ptr<node>> targets;
    {
        std::lock_guard lk(mu_);
        auto it = placed_.find(session_id);
        for (auto &n : nodes_)
            if (it == placed_.end() || it->second.base == n->base) targets.push_back(n);
    }
    for (auto &n : targets) n->client->cancel(session_id, epoch);
}

bool node_pool::stream_open(uint64_t stream) {
    auto n = by_stream(stream);
    return n && n->client->stream_open(stream);
}

bool node_pool::render(const worker_submission &sub, accepted_session &acc, start_error &err) {
    for (auto &n : usable_nodes()) {
        if (n->client->render(sub, acc, err)) return true;
        if (err.type != start_error::kind::UNAVAILABLE) return false;
    }
    err.type    = start_error::kind::UNAVAILABLE;
    err.message = "no inference node is available; retry shortly";
    return false;
}

bool node_pool::embed(const embed_batch &job, std::vector<embedding> &out, start_error &err) {
    for (auto &n : usable_nodes()) {
        if (n->client->embed(job, out, err)) return true;
        if (err.type != start_error::kind::UNAVAILABLE) return false;
    }
    err.type    = start_error::kind::UNAVAILABLE;
    err.message = "no inference node is available; retry shortly";
    return false;
}

bool node_pool::model_info(model_description &out) {
    for (auto &n : usable_nodes())
        if (n->client->model_info(out)) return true;
    return false;
}

worker_health node_pool::health() {
    std::lock_guard lk(mu_);
    for (auto &n : nodes_)
        if (usable(*n)) return n->last;
    // Nothing usable: the local worker's state (loading, down), or unreachable.
    for (auto &n : nodes_)
        if (n->reference) return n->last;
    return {};
}

worker_client::counters node_pool::stats() {
    std::vector<std::shared_ptr<node>> all;
    {
        std::lock_guard lk(mu_);
        all = nodes_;
    }
    counters c;
    for (auto &n : all) {
        const counters s = n->client->stats();
        if (n->reference) {
            c.pid    = s.pid;
            c.starts = s.starts;
        }
        c.batches += s.batches;
        c.events += s.events;
    }
    return c;
}

std::vector<node_report> node_pool::nodes() {
    std::lock_guard lk(mu_);
    const auto now = std::chrono::steady_clock::now();
    std::vector<node_report> out;
    for (auto &n : nodes_) {
        node_report r;
        r.name          = n->name;
        r.address       = n->address;
        const bool gone = lost(*n, now);
        r.state         = n->st == node_state::REFUSED    ? "refused"
                          : gone                          ? "lost"
                          : !n->last.reachable && n->seen ? "failing"
                          : n->st == node_state::ACTIVE   ? "active"
                                                          : "pending";
        r.message       = n->message;
        if (gone && r.message.empty()) {
            const auto s = std::chrono::duration_cast<std::chrono::seconds>(now - n->last_seen);
            r.message    = "unreachable for " + std::to_string(s.count()) +
                        " s (no answer, no registration); revoke it or let it re-join";
        }
        r.model_fingerprint     = n->model_fp;
        r.tokenizer_fingerprint = n->tokenizer_fp;
        r.slots                 = n->last.status.n_parallel;
        for (auto &[id, p] : placed_) r.running += p.base == n->base;
        r.last_seen_s  = n->seen ? std::chrono::duration<double>(now - n->last_seen).count() : -1.0;
        r.placed_total = n->placed_total;
        r.certificate_serial   = n->serial;
        r.engine               = n->engine;
        const worker_status &s = n->last.status;
        r.model_name           = s.model_name;
        for (size_t c = 0; c < 3 && c < s.classes.size(); ++c)
            r.running_by_class[c] = s.classes[c].running;
        r.kv_cells           = s.kv_total_cells;
        r.kv_bytes_per_token = s.kv_bytes_per_token;
        r.cache_hit_rate     = s.cache.prompt_tokens > 0
                                   ? double(s.cache.cached_tokens) / double(s.cache.prompt_tokens)
                                   : 0.0;
        r.cached_tokens      = s.cache.cached_tokens;
        out.push_back(std::move(r));
    }
    return out;
}

void node_pool::on_events(uint64_t stream, std::vector<worker_event> &batch) {
    {
        std::lock_guard lk(mu_);
        const uint64_t base = (stream >> k_stream_shift) << k_stream_shift;
        for (const auto &e : batch) {
            if (e.ev.type != session_event::kind::FINISHED) continue;
            auto it = placed_.find(e.session_id);
            if (it != placed_.end() && it->second.base == base && it->second.epoch == e.epoch) {
                placed_.erase(it);
            } else if (it == placed_.end() || it->second.epoch < e.epoch) {
                if (finished_early_.size() >= 1024) finished_early_.clear();
                finished_early_[e.session_id] = e.epoch;
            }
        }
    }
    std::lock_guard lk(listener_mu_);
    if (listener_) listener_->on_events(stream, batch);
}

void node_pool::on_stream_lost(uint64_t stream) {
    {
        std::lock_guard lk(mu_);
        const uint64_t base = (stream >> k_stream_shift) << k_stream_shift;
        size_t moved        = 0;
        for (auto it = placed_.begin(); it != placed_.end();) {
            const bool here = it->second.base == base;
            moved += here;
            it = here ? placed_.erase(it) : std::next(it);
        }
        // Not a placement target until a poll finds it answering again; what its prefix cache
        // held is unknown now (its worker may have restarted).
        affinity_.forget(base);
        for (auto &n : nodes_) {
            if (n->base != base) continue;
            n->last.reachable = false;
            // A guest that comes back may have restarted with another model: checked again.
            if (!n->reference && n->st == node_state::ACTIVE) n->st = node_state::PENDING;
            if (moved > 0)
                SF_LOG_WARN("cluster",
                            "node %s: events stream lost with %zu sessions; they "
                            "resume on another node",
                            n->name.c_str(), moved);
        }
    }
    std::lock_guard lk(listener_mu_);
    if (listener_) listener_->on_stream_lost(stream);
}

void node_pool::poll(const std::shared_ptr<node> &n) {
    worker_health h = n->client->health();
    node_state st;
    {
        std::lock_guard lk(mu_);
        n->last = h;
        if (h.reachable) {
            n->last_seen = std::chrono::steady_clock::now();
            n->seen      = true;
        }
        st = n->st;
    }
    if (st != node_state::PENDING || !h.reachable || !h.status.ready) return;
    {
        // A guest waits for the local worker's fingerprint when there is a local worker.
        std::lock_guard lk(mu_);
        const bool local_pending = std::any_of(nodes_.begin(), nodes_.end(), [](auto &o) {
            return o->reference && o->st != node_state::ACTIVE;
        });
        if (!n->reference && local_pending) return;
    }
    model_description d;
    if (!n->client->model_info(d)) return;
    bool refused = false;
    {
        std::lock_guard lk(mu_);
        n->model_fp     = d.model_fingerprint;
        n->engine       = d.engine;
        n->tokenizer_fp = d.tokenizer_fingerprint;
        if (reference_fp_.empty()) reference_fp_ = d.tokenizer_fingerprint;
        if (d.tokenizer_fingerprint != reference_fp_) {
            n->st      = node_state::REFUSED;
            n->message = "its model's tokenizer (fingerprint " +
                         d.tokenizer_fingerprint.substr(0, 16) + "…) differs from the cluster's (" +
                         reference_fp_.substr(0, 16) + "…): a session cannot move between them";
            refused = true;
        } else {
            n->st = node_state::ACTIVE;
        }
    }
    if (refused) {
        SF_LOG_ERROR("cluster", "node %s refused: %s", n->name.c_str(), n->message.c_str());
        n->client->stop();
        return;
    }
    SF_LOG_INFO("cluster", "node %s active (%s, %d slots, model %s)", n->name.c_str(),
                n->address.empty() ? "local worker" : n->address.c_str(), h.status.n_parallel,
                d.model_fingerprint.substr(0, 16).c_str());
}

void node_pool::monitor() {
    std::unique_lock lk(mu_);
    while (!stop_) {
        std::vector<std::shared_ptr<node>> todo = nodes_;
        lk.unlock();
        for (auto &n : todo) {
            bool refused;
            {
                std::lock_guard g(mu_);
                refused = n->st == node_state::REFUSED;
            }
            if (!refused) poll(n);
        }
        lk.lock();
        cv_.wait_for(lk, std::chrono::milliseconds(500), [&] { return stop_; });
    }
}

}  // namespace sf
