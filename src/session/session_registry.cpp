#include "session/session_registry.h"

#include <openssl/rand.h>

#include <cstdio>
#include <stdexcept>

#include "protocol/request_codec.h"

namespace sf {

std::string session_registry::new_id() {
    // 128 bits from OpenSSL's CSPRNG (issue #38: ids were a per-thread mt19937_64 seeded with
    // 32 bits plus a counter, guessable by anyone who saw one).
    unsigned char bytes[16];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        throw std::runtime_error("session ids: the system's random source failed");
    char buf[5 + 2 * sizeof bytes + 1] = "sess_";
    for (size_t i = 0; i < sizeof bytes; ++i) snprintf(buf + 5 + 2 * i, 3, "%02x", bytes[i]);
    return buf;
}

void session_registry::add(const std::shared_ptr<session> &s) {
    std::lock_guard lk(mu_);
    live_[s->id()] = s;
}

void session_registry::remove(const std::string &id) {
    std::lock_guard lk(mu_);
    live_.erase(id);
}

std::vector<std::shared_ptr<session>> session_registry::running() {
    std::vector<std::shared_ptr<session>> out;
    std::lock_guard lk(mu_);
    for (auto &[id, weak] : live_)
        if (auto s = weak.lock()) out.push_back(std::move(s));
    return out;
}

std::shared_ptr<session> session_registry::running_session(const std::string &id) {
    std::lock_guard lk(mu_);
    auto it = live_.find(id);
    return it == live_.end() ? nullptr : it->second.lock();
}

namespace {

// The journaled tokens into `s`. Token rows keep no prefix cache count; the first token gets
// the session row's (the finish's, 0 before it), which is the first token's count unless the
// session moved, so a reader of a journaled session sees what the live stream showed
// (Anthropic's message_start, api/anthropic/anthropic_stream_encoder.h).
void add_journaled_tokens(session &s, const journal::stored_session &stored) {
    for (size_t i = 0; i < stored.tokens.size(); ++i) {
        session_event t = stored.tokens[i];
        if (i == 0 && t.cached_tokens == 0) t.cached_tokens = stored.rec.cached_tokens;
        s.add_token(std::move(t));
    }
}

}  // namespace

// The chat parse spec is journaled with the request (has_parse). A journal written before that
// gets it by rendering the request again on the worker (the same bytes give the same spec;
// this fails while the worker is still loading the model).
std::shared_ptr<session> session_registry::restore(const journal::stored_session &stored,
                                                   worker_submission &sub) {
    const auto &rec = stored.rec;
    auto s = std::make_shared<session>(rec.id, rec.model, rec.prompt_tokens, rec.cached_tokens);
    s->set_api(rec.api, rec.created_ms / 1000);
    add_journaled_tokens(*s, stored);
    if (!protocol::decode_submission(rec.request, sub)) return nullptr;
    sub.session_id    = rec.id;
    sub.request.model = rec.model;
    sub.request.api   = rec.api;
    s->set_client_meta(sub.request.client_meta);
    s->set_client(sub.request.client);
    s->set_origin(sub.request.cls, std::chrono::steady_clock::now());
    if (!sub.request.is_chat) return s;
    if (!sub.has_parse) {
        accepted_session acc;
        start_error err;
        if (worker_.render(sub, acc, err) && acc.has_parse) {
            sub.has_parse = true;
            sub.parse     = acc.parse;
        }
    }
    if (sub.has_parse) s->set_parse_spec(sub.parse);
    return s;
}

std::shared_ptr<session> session_registry::find(const std::string &id, bool *interrupted) {
    if (interrupted) *interrupted = false;
    if (auto s = running_session(id)) return s;
    if (!journal_.enabled()) return nullptr;
    auto stored = journal_.db()->load(id);
    if (!stored) return nullptr;
    worker_submission sub;
    auto s = restore(*stored, sub);
    if (!s) {
        const auto &rec = stored->rec;
        s = std::make_shared<session>(rec.id, rec.model, rec.prompt_tokens, rec.cached_tokens);
        s->set_api(rec.api, rec.created_ms / 1000);
        add_journaled_tokens(*s, *stored);
    }
    if (stored->finish) {
        s->finish(std::move(*stored->finish));
        return s;
    }
    // Re-check: it may have finished (and left the running set) since we looked.
    if (auto live = running_session(id)) return live;
    auto again = journal_.db()->load(id);
    if (again && again->finish) return find(id, interrupted);
    if (interrupted) *interrupted = true;
    session_event fe;
    fe.type              = session_event::kind::FINISHED;
    fe.reason            = finish_reason::ERROR;
    fe.error             = "the session was interrupted; it resumes when the server restarts";
    fe.prompt_tokens     = stored->rec.prompt_tokens;
    fe.completion_tokens = static_cast<int32_t>(s->token_count());
    s->finish(std::move(fe));
    return s;
}

}  // namespace sf
