#include "session/session_manager.h"

#include <future>
#include <random>

#include "protocol/request_codec.h"
#include "session/cache_scope.h"
#include "session/volatile_lines.h"
#include "util/log.h"

namespace sf {

session_manager::session_manager(std::unique_ptr<worker_client> worker)
    : worker_(std::move(worker)) {
    use_journal(std::make_unique<journal::writer>(nullptr));
}

session_manager::~session_manager() {
    stop();
}

void session_manager::use_journal(std::unique_ptr<journal::writer> j) {
    journal_  = std::move(j);
    registry_ = std::make_unique<session_registry>(*journal_, *worker_);
    relay_    = std::make_unique<session_relay>(*worker_, *journal_, latency_);
    resumer_  = std::make_unique<session_resumer>(*relay_, *worker_);
    relay_->set_on_lost([this](const std::vector<std::string> &ids) { resumer_->enqueue(ids); });
    relay_->set_on_finished([this](const std::string &id) { registry_->remove(id); });
    worker_->set_listener(relay_.get());
}

bool session_manager::start_worker() {
    if (!worker_->start()) return false;
    resumer_->start();
    return true;
}

void session_manager::shutdown_sessions() {
    shutting_down_.store(true);
    relay_->set_shutting_down();
    auto running = registry_->running();
    for (auto &s : running) {
        session_event fe;
        fe.type   = session_event::kind::FINISHED;
        fe.reason = finish_reason::ERROR;
        fe.error  = "the server is shutting down";
        s->finish(std::move(fe));
        s->cancel();
    }
    if (!running.empty())
        SF_LOG_INFO("head", "shutdown: ended %zu running sessions", running.size());
}

void session_manager::stop() {
    shutdown_sessions();
    resumer_->stop();
    worker_->stop();  // no relay call after this
    journal_->stop();
}

worker_submission session_manager::make_submission(const generate_request &req,
                                                   const std::string &id) const {
    worker_submission sub;
    sub.session_id = id;
    sub.request    = req;
    // A per-request billing header in the system prompt would defeat the prefix cache.
    normalize_volatile_lines(sub.request.messages);
    if (!req.has_seed) {
        static thread_local std::mt19937 rng{std::random_device{}()};
        sub.request.sampling.seed = rng();
        sub.request.has_seed      = true;
    }
    if (sub.request.api.empty())
        sub.request.api = req.is_chat ? "openai.chat" : "openai.completion";
    // Who may share its cached prefixes: its salt, and its key when sharing is per key.
    const bool by_key       = cache_per_key_ && req.client.rfind("key:", 0) == 0;
    sub.request.cache_scope = make_cache_scope(req.cache_salt, by_key ? req.client : "");
    sub.request.cache_salt.clear();
    return sub;
}

bool session_manager::journal_begin(const session &s, const worker_submission &sub,
                                    std::string &error) {
    journal::op row;
    row.type              = journal::op::kind::BEGIN;
    row.session           = s.id();
    row.rec.id            = s.id();
    row.rec.api           = s.api();
    row.rec.model         = s.model();
    row.rec.cls           = static_cast<int>(sub.request.cls);
    row.rec.seed          = sub.request.sampling.seed;
    row.rec.request       = protocol::encode_submission(sub);
    row.rec.prompt_tokens = s.prompt_tokens();
    row.rec.cached_tokens = s.cached_tokens();
    row.rec.created_ms    = s.created_unix() * 1000;
    std::promise<std::string> committed;
    row.done = [&committed](bool ok, const std::string &e) {
        committed.set_value(ok ? std::string() : e.empty() ? "unknown error" : e);
    };
    journal_->submit(std::move(row));
    error = committed.get_future().get();
    return error.empty();
}

std::shared_ptr<session> session_manager::start(const generate_request &req, start_error &err) {
    if (shutting_down_.load()) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the server is shutting down";
        return nullptr;
    }
    const auto t0         = std::chrono::steady_clock::now();
    const int64_t now_ms  = journal::unix_ms();
    worker_submission sub = make_submission(req, registry_->new_id());
    if (retry_resume_ && journal_->enabled()) {
        sub.request.retry_key = retry_index::key(sub, req.has_seed);
        if (auto again = retries_.take(sub.request.retry_key)) {
            SF_LOG_INFO("head",
                        "session %s: the same request again after a restart; attaching "
                        "it at token %zu (retry-resume)",
                        again->id().c_str(), again->token_count());
            return again;
        }
    }
    const std::string &id = sub.session_id;
    sub.epoch             = relay_->prepare(id);  // its first events may come before the answer
    accepted_session acc;
    if (!worker_->submit(sub, acc, err)) {
        relay_->drop(id);
        return nullptr;
    }
    auto s = std::make_shared<session>(id, req.model, acc.prompt_tokens, acc.cached_tokens);
    s->set_api(sub.request.api, now_ms / 1000);
    s->set_client_meta(req.client_meta);
    s->set_user_agent(req.user_agent);
    s->set_client(req.client);
    if (req.want_prompt_tokens) s->set_prompt_token_ids(acc.prompt_token_ids);
    if (acc.has_parse) {
        s->set_parse_spec(acc.parse);
        sub.has_parse = true;  // journaled, so a re-read session parses as this one does
        sub.parse     = acc.parse;
    }
    s->set_origin(req.cls, t0);

    // The session row is committed before any of its tokens can be (the relay holds them until
    // activate) and before the client hears of the session: a journal that cannot be written
    // refuses it.
    std::string jerr;
    if (!journal_begin(*s, sub, jerr)) {
        worker_->cancel(id, sub.epoch);
        relay_->drop(id);
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the token journal cannot be written (" + jerr + ")";
        return nullptr;
    }
    registry_->add(s);
    s->set_canceller([relay = relay_.get(), id] { relay->cancel(id); });
    relay_->activate(s, sub, acc.stream, t0);
    return s;
}

bool session_manager::count_prompt_tokens(const generate_request &req, int32_t &tokens,
                                          start_error &err) {
    if (shutting_down_.load()) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the server is shutting down";
        return false;
    }
    // Counted as start() renders it, so usage adds up to this count.
    accepted_session acc;
    if (!worker_->render(make_submission(req, registry_->new_id()), acc, err)) return false;
    tokens = acc.prompt_tokens;
    return true;
}

size_t session_manager::resume_journaled() {
    if (!journal_->enabled()) return 0;
    size_t n = 0;
    for (auto &stored : journal_->db()->unfinished()) {
        worker_submission sub;
        auto s = registry_->restore(stored, sub);
        if (!s) {
            const auto &rec = stored.rec;
            s = std::make_shared<session>(rec.id, rec.model, rec.prompt_tokens, rec.cached_tokens);
            session_event fe;
            fe.type   = session_event::kind::FINISHED;
            fe.reason = finish_reason::ERROR;
            fe.error  = "the journaled request cannot be read; the session cannot be resumed";
            SF_LOG_ERROR("head", "session %s: %s", rec.id.c_str(), fe.error.c_str());
            // Through the relay's journal path: adopt, then fail at once.
            relay_->adopt_failed(s, std::move(fe));
            continue;
        }
        SF_LOG_INFO("head", "session %s: resuming after a restart at token %zu", s->id().c_str(),
                    s->token_count());
        registry_->add(s);
        s->set_canceller([relay = relay_.get(), id = s->id()] { relay->cancel(id); });
        if (retry_resume_) retries_.offer(sub.request.retry_key, s);
        relay_->adopt(s, sub);
        ++n;
    }
    return n;
}

std::vector<session_manager::session_info> session_manager::running_sessions() {
    std::vector<session_info> out;
    const auto now = std::chrono::steady_clock::now();
    for (auto &s : registry_->running()) {
        if (s->finished()) continue;
        out.push_back({s->id(), s->cls(), s->api(), s->user_agent(), s->client(),
                       s->prompt_tokens(), s->token_count(),
                       std::chrono::duration<double>(now - s->started()).count(), s->ttft_s()});
    }
    return out;
}

bool session_manager::embed(const embed_batch &job, std::vector<embedding> &out, start_error &err) {
    if (shutting_down_.load()) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the server is shutting down";
        return false;
    }
    return worker_->embed(job, out, err);
}

bool session_manager::model_info(model_description &out) {
    std::lock_guard lk(info_mu_);
    if (!have_info_) {
        if (!worker_->model_info(info_)) return false;
        have_info_ = true;
    }
    out = info_;
    return true;
}

}  // namespace sf
