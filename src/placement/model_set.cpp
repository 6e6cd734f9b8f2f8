#include "placement/model_set.h"

#include <algorithm>

#include "util/log.h"

namespace sf {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

start_error unavailable(std::string message) {
    start_error err;
    err.type    = start_error::kind::UNAVAILABLE;
    err.message = std::move(message);
    return err;
}

}  // namespace

model_set::model_set(std::vector<model> models, size_t default_index, factory make, options o)
    : default_(default_index), make_(std::move(make)), opts_(o) {
    slots_.resize(models.size());
    for (size_t i = 0; i < models.size(); ++i) slots_[i].m = std::move(models[i]);
}

model_set::~model_set() {
    stop();
}

bool model_set::start() {
    {
        std::lock_guard lk(mu_);
        slots_[default_].st = residency::LOADING;
        loads_.push_back(default_);
    }
    reaper_thread_ = std::thread([this] { reaper(); });
    loader_thread_ = std::thread([this] { loader(); });
    return true;
}

// Every load runs here: a worker process gets the parent-death signal when the thread that
// spawned it ends (PR_SET_PDEATHSIG is per thread), so a request thread must not spawn it.
void model_set::loader() {
    std::unique_lock lk(mu_);
    for (;;) {
        // Stopping: no new load, but the thread lives until stop() has stopped every worker
        // (its end would send them their parent-death signal while supervised).
        cv_.wait(lk, [&] { return loader_exit_ || (!stop_ && !loads_.empty()); });
        if (loader_exit_) break;
        const size_t i = loads_.front();
        loads_.pop_front();
        if (!load(i, lk)) ++slots_[i].load_failures;
        cv_.notify_all();
    }
    for (size_t i : loads_) slots_[i].st = residency::UNLOADED;
    loads_.clear();
    cv_.notify_all();
}

void model_set::stop() {
    std::vector<std::shared_ptr<worker_client>> clients;
    {
        std::lock_guard lk(mu_);
        stop_ = true;
        for (auto &s : slots_)
            if (s.client) clients.push_back(s.client);
    }
    cv_.notify_all();
    if (reaper_thread_.joinable()) reaper_thread_.join();
    {
        std::lock_guard lk(mu_);  // a load that started its client since
        for (auto &s : slots_)
            if (s.client && std::find(clients.begin(), clients.end(), s.client) == clients.end())
                clients.push_back(s.client);
    }
    for (auto &c : clients) c->stop();  // a load in progress ends: its wait_ready returns
    {
        std::lock_guard lk(mu_);
        loader_exit_ = true;
    }
    cv_.notify_all();
    if (loader_thread_.joinable()) loader_thread_.join();
}

size_t model_set::index_of(const std::string &id) const {
    // Ollama's "<id>:latest" as its clients name (and the journal keeps) it.
    const std::string latest = ":latest";
    const bool tagged        = id.size() > latest.size() && id.ends_with(latest);
    const std::string bare   = tagged ? id.substr(0, id.size() - latest.size()) : id;
    for (size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].m.id == id) return i;
    for (size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].m.id == bare) return i;
    return default_;
}

int model_set::occupied() const {
    return static_cast<int>(std::count_if(
        slots_.begin(), slots_.end(), [](const slot &s) { return s.st != residency::UNLOADED; }));
}

bool model_set::idle(slot &s, clock_type::time_point now) {
    std::erase_if(s.placed, [&](const auto &p) {
        return p.second.lost_at != clock_type::time_point{} &&
               now - p.second.lost_at > k_lost_grace;
    });
    return s.pins == 0 && s.placed.empty();
}

int model_set::eviction_candidate(size_t except, clock_type::time_point now) {
    int best = -1;
    for (size_t j = 0; j < slots_.size(); ++j) {
        slot &s = slots_[j];
        if (j == except || s.st != residency::RESIDENT || !idle(s, now)) continue;
        if (best < 0 || s.last_used < slots_[best].last_used) best = static_cast<int>(j);
    }
    return best;
}

int64_t model_set::keep_alive_ms(const slot &s) const {
    return s.keep_alive_ms != generate_request::k_keep_alive_unset ? s.keep_alive_ms
                                                                   : opts_.keep_alive.count();
}

int model_set::by_stream(uint64_t stream) const {
    const uint64_t base = (stream >> k_stream_shift) << k_stream_shift;
    for (size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].st != residency::UNLOADED && slots_[i].base == base)
            return static_cast<int>(i);
    return -1;
}

bool model_set::load(size_t i, std::unique_lock<std::mutex> &lk) {
    slot &s              = slots_[i];
    s.base               = ++next_load_ << k_stream_shift;
    const uint64_t base  = s.base;
    const std::string id = s.m.id;
    lk.unlock();
    SF_LOG_INFO("models", "loading model '%s' (%s)", id.c_str(), s.m.path.c_str());
    const auto t0                    = clock_type::now();
    std::shared_ptr<worker_client> c = make_(i, base);
    c->set_listener(this);
    bool ok = c->start();
    if (ok) {
        lk.lock();
        s.client = c;
        ok       = !stop_;
        lk.unlock();
    }
    ok = ok && c->wait_ready(opts_.load_timeout);
    if (!ok) c->stop();
    lk.lock();
    if (!ok || stop_) {
        s.client.reset();
        s.st = residency::UNLOADED;
        if (!stop_) SF_LOG_ERROR("models", "model '%s' could not be loaded", id.c_str());
        cv_.notify_all();
        return false;
    }
    s.st        = residency::RESIDENT;
    s.last_used = clock_type::now();
    ++s.starts;
    SF_LOG_INFO("models", "model '%s' loaded in %.1f s", id.c_str(), seconds_since(t0));
    cv_.notify_all();
    return true;
}

void model_set::unload(size_t i, std::unique_lock<std::mutex> &lk, const char *why) {
    slot &s = slots_[i];
    auto c  = s.client;
    lk.unlock();
    SF_LOG_INFO("models", "unloading model '%s' (%s)", s.m.id.c_str(), why);
    if (c) c->stop();
    lk.lock();
    s.client.reset();
    s.placed.clear();
    s.st            = residency::UNLOADED;
    s.keep_alive_ms = generate_request::k_keep_alive_unset;  // a keep_alive lasts one load
    cv_.notify_all();
}

std::shared_ptr<worker_client> model_set::acquire(size_t i, start_error &err) {
    std::unique_lock lk(mu_);
    slot &s = slots_[i];
    ++s.pins;
    const int32_t failures = s.load_failures;
    bool logged_wait       = false;
    for (;;) {
        if (stop_) {
            --s.pins;
            err = unavailable("the server is shutting down");
            return nullptr;
        }
        if (s.st == residency::RESIDENT) return s.client;
        if (s.st == residency::UNLOADED && s.load_failures > failures) {
            --s.pins;
            cv_.notify_all();
            err = unavailable("the model '" + s.m.id + "' could not be loaded");
            return nullptr;
        }
        if (s.st == residency::UNLOADED) {
            if (opts_.max_models <= 0 || occupied() < opts_.max_models) {
                s.st = residency::LOADING;  // the loader thread loads it
                loads_.push_back(i);
                cv_.notify_all();
                continue;
            }
            if (const int v = eviction_candidate(i, clock_type::now()); v >= 0) {
                slots_[v].st = residency::UNLOADING;
                unload(static_cast<size_t>(v), lk, ("room for '" + s.m.id + "'").c_str());
                continue;
            }
            if (!logged_wait)
                SF_LOG_INFO("models",
                            "model '%s' waits for a resident model to be idle (--max-models %d)",
                            s.m.id.c_str(), opts_.max_models);
            logged_wait = true;
        }
        // A load or unload in progress, or no room yet: woken by any change of the slots (the
        // timeout bounds how late a lost session's grace is seen to end).
        cv_.wait_for(lk, std::chrono::milliseconds(250));
    }
}

void model_set::release(size_t i) {
    {
        std::lock_guard lk(mu_);
        --slots_[i].pins;
        slots_[i].last_used = clock_type::now();
    }
    cv_.notify_all();
}

template <class F>
bool model_set::on_model(size_t i, start_error &err, F &&call) {
    auto c = acquire(i, err);
    if (!c) return false;
    // A model whose worker is restarting (it died) answers once it is back.
    c->wait_ready(opts_.load_timeout);
    const bool ok = call(*c);
    release(i);
    return ok;
}

bool model_set::submit(const worker_submission &sub, accepted_session &acc, start_error &err) {
    const size_t i = index_of(sub.request.model);
    return on_model(i, err, [&](worker_client &c) {
        {
            std::lock_guard lk(mu_);
            slots_[i].placed[sub.session_id] = {sub.epoch,
                                                {}};  // before: its finish may come first
        }
        const bool ok = c.submit(sub, acc, err);
        std::lock_guard lk(mu_);
        slot &s = slots_[i];
        if (!ok) {
            auto it = s.placed.find(sub.session_id);
            if (it != s.placed.end() && it->second.epoch == sub.epoch) s.placed.erase(it);
        } else if (sub.request.keep_alive_ms != generate_request::k_keep_alive_unset) {
            s.keep_alive_ms = sub.request.keep_alive_ms;
        }
        return ok;
    });
}

void model_set::cancel(const std::string &session_id, uint64_t epoch) {
    std::shared_ptr<worker_client> c;
    {
        std::lock_guard lk(mu_);
        for (auto &s : slots_)
            if (s.client && s.placed.count(session_id)) c = s.client;
    }
    if (c) c->cancel(session_id, epoch);
}

bool model_set::stream_open(uint64_t stream) {
    std::shared_ptr<worker_client> c;
    {
        std::lock_guard lk(mu_);
        if (const int i = by_stream(stream); i >= 0) c = slots_[i].client;
    }
    return c && c->stream_open(stream);
}

bool model_set::wait_ready(std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    const slot &d = slots_[default_];
    if (d.st == residency::UNLOADED) return true;  // evicted: a submission loads it
    if (!d.client) {
        cv_.wait_for(lk, timeout);
        return false;
    }
    auto c = d.client;
    lk.unlock();
    return c->wait_ready(timeout);
}

bool model_set::load_model(const std::string &model, int64_t keep_alive_ms, start_error &err) {
    const size_t i = index_of(model);
    if (keep_alive_ms == 0) {
        std::lock_guard lk(mu_);
        if (slots_[i].st != residency::UNLOADED) slots_[i].keep_alive_ms = 0;  // the reaper's
        return true;
    }
    return on_model(i, err, [&](worker_client &) {
        std::lock_guard lk(mu_);
        if (keep_alive_ms != generate_request::k_keep_alive_unset)
            slots_[i].keep_alive_ms = keep_alive_ms;
        return true;
    });
}

bool model_set::render(const worker_submission &sub, accepted_session &acc, start_error &err) {
    return on_model(index_of(sub.request.model), err,
                    [&](worker_client &c) { return c.render(sub, acc, err); });
}

bool model_set::embed(const embed_batch &job, std::vector<embedding> &out, start_error &err) {
    return on_model(default_, err, [&](worker_client &c) { return c.embed(job, out, err); });
}

bool model_set::model_info(model_description &out) {
    std::shared_ptr<worker_client> c;
    {
        std::lock_guard lk(mu_);
        if (slots_[default_].st == residency::RESIDENT) c = slots_[default_].client;
    }
    return c && c->model_info(out);
}

worker_health model_set::health() {
    std::shared_ptr<worker_client> c;
    {
        std::lock_guard lk(mu_);
        c = slots_[default_].client;
        for (size_t j = 0; !c && j < slots_.size(); ++j)
            if (slots_[j].st == residency::RESIDENT) c = slots_[j].client;
        if (!c && slots_[default_].st == residency::UNLOADED) {
            // Nothing resident (the default was evicted): the server takes requests, which load.
            worker_health h;
            h.reachable    = true;
            h.status.ready = true;
            return h;
        }
    }
    return c ? c->health() : worker_health{};
}

worker_client::counters model_set::stats() {
    std::shared_ptr<worker_client> c;
    {
        std::lock_guard lk(mu_);
        c = slots_[default_].client;
    }
    return c ? c->stats() : counters{};
}

std::vector<model_report> model_set::models() {
    std::vector<model_report> out;
    std::vector<std::shared_ptr<worker_client>> clients;
    {
        std::lock_guard lk(mu_);
        const auto now = clock_type::now();
        for (size_t i = 0; i < slots_.size(); ++i) {
            slot &s = slots_[i];
            model_report r;
            r.id               = s.m.id;
            r.path             = s.m.path;
            r.is_default       = i == default_;
            r.state            = s.st == residency::UNLOADED   ? "unloaded"
                                 : s.st == residency::LOADING  ? "loading"
                                 : s.st == residency::RESIDENT ? "resident"
                                                               : "unloading";
            const bool is_idle = idle(s, now);
            r.sessions         = static_cast<int32_t>(s.placed.size());
            r.waiting          = s.st == residency::RESIDENT ? 0 : s.pins;
            const int64_t ka   = keep_alive_ms(s);
            if (s.st == residency::RESIDENT && !r.is_default && is_idle && ka >= 0) {
                const auto idle_ms =
                    std::chrono::duration_cast<std::chrono::milliseconds>(now - s.last_used)
                        .count();
                r.expires_in_ms = std::max<int64_t>(0, ka - idle_ms);
            }
            out.push_back(std::move(r));
            clients.push_back(s.client);
        }
    }
    for (size_t i = 0; i < out.size(); ++i) {
        if (!clients[i]) continue;
        const auto c  = clients[i]->stats();
        out[i].pid    = c.pid;
        out[i].starts = c.starts;
    }
    return out;
}

void model_set::on_events(uint64_t stream, std::vector<worker_event> &batch) {
    bool changed = false;
    {
        std::lock_guard lk(mu_);
        if (const int i = by_stream(stream); i >= 0) {
            slot &s = slots_[i];
            for (const auto &e : batch) {
                if (e.ev.type != session_event::kind::FINISHED) continue;
                auto it = s.placed.find(e.session_id);
                if (it == s.placed.end() || it->second.epoch != e.epoch) continue;
                s.placed.erase(it);
                s.last_used = clock_type::now();
                changed     = true;
            }
        }
    }
    if (changed) cv_.notify_all();
    std::lock_guard lk(listener_mu_);
    if (listener_) listener_->on_events(stream, batch);
}

void model_set::on_stream_lost(uint64_t stream) {
    {
        std::lock_guard lk(mu_);
        if (const int i = by_stream(stream); i >= 0) {
            const auto now = clock_type::now();
            for (auto &[id, p] : slots_[i].placed)
                if (p.lost_at == clock_type::time_point{}) p.lost_at = now;
            if (!slots_[i].placed.empty())
                SF_LOG_WARN("models", "model '%s': its worker was lost with %zu sessions",
                            slots_[i].m.id.c_str(), slots_[i].placed.size());
        }
    }
    std::lock_guard lk(listener_mu_);
    if (listener_) listener_->on_stream_lost(stream);
}

void model_set::reaper() {
    std::unique_lock lk(mu_);
    while (!cv_.wait_for(lk, k_reaper_period, [&] { return stop_; })) {
        const auto now = clock_type::now();
        for (size_t j = 0; j < slots_.size(); ++j) {
            slot &s = slots_[j];
            if (j == default_ || s.st != residency::RESIDENT || !idle(s, now)) continue;
            const int64_t ka = keep_alive_ms(s);
            if (ka < 0 || now - s.last_used < std::chrono::milliseconds(ka)) continue;
            s.st = residency::UNLOADING;
            unload(j, lk, "idle for its keep-alive");
            if (stop_) return;
        }
    }
}

}  // namespace sf
