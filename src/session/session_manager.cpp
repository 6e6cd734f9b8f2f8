#include "session/session_manager.h"

#include <grpcpp/grpcpp.h>

#include <signal.h>

#include <future>
#include <random>
#include <thread>

#include "session/volatile_lines.h"
#include "protocol/convert.h"
#include "util/log.h"

namespace sf {

namespace pb = superfluid::worker::v1;

session_manager::session_manager(std::vector<std::string> worker_argv, std::string socket_path)
    : worker_(std::make_unique<worker_process>(std::move(worker_argv))),
      socket_path_(std::move(socket_path)) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    // Reconnect quickly after a worker restart (defaults back off up to 2 minutes).
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    // No bandwidth-delay probing: it answers a data frame with a PING, which over a local
    // socket carrying one small message per token is a round trip per token in both processes.
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    channel_ =
        grpc::CreateCustomChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials(), args);
    stub_   = pb::Worker::NewStub(channel_);
    events_ = std::make_unique<worker_events>(
        stub_.get(), [this](bool begin) { begin ? journal_->hold() : journal_->release(); });
}

session_manager::~session_manager() {
    stop();
}

bool session_manager::start_worker() {
    if (!worker_->start()) return false;
    events_->start();
    watchdog_ = std::thread([this] { watchdog(); });
    return true;
}

// A worker that does not answer Health for kWatchdogMisses seconds in a row while its process
// exists is hung (a live worker answers on gRPC threads even during a long decode): kill it,
// the supervisor restarts it, and requests fail fast instead of hanging.
void session_manager::watchdog() {
    constexpr int kWatchdogMisses = 10;
    int misses                    = 0;
    std::unique_lock lk(watchdog_mu_);
    while (!watchdog_cv_.wait_for(lk, std::chrono::seconds(1), [&] { return watchdog_stop_; })) {
        lk.unlock();
        pid_t pid = worker_->pid();
        bool ok   = health().reachable;
        misses    = ok || pid <= 0 ? 0 : misses + 1;
        if (misses >= kWatchdogMisses) {
            SF_LOG_ERROR("head", "worker %d has not answered for %d s: killing it", pid, misses);
            kill(pid, SIGKILL);
            misses = 0;
        }
        lk.lock();
    }
}

void session_manager::shutdown_sessions() {
    shutting_down_.store(true);
    std::vector<std::shared_ptr<session>> running;
    {
        std::lock_guard lk(live_mu_);
        for (auto &[id, weak] : live_) {
            if (auto s = weak.lock()) running.push_back(std::move(s));
        }
    }
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
    {
        std::lock_guard lk(watchdog_mu_);
        watchdog_stop_ = true;
    }
    watchdog_cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
    worker_->stop();
    events_->stop();  // loses every mailbox still bound: their pumps end
    // Pumps end when their streams break; give them a moment so none outlives us.
    for (int i = 0; i < 50 && pumps_.load() > 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    journal_->stop();
}

std::string session_manager::new_session_id() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    char buf[40];
    snprintf(buf, sizeof buf, "sess_%016llx%04llx", static_cast<unsigned long long>(rng()),
             static_cast<unsigned long long>(counter_.fetch_add(1) & 0xffff));
    return buf;
}

pb::GenerateRequest session_manager::to_proto(const generate_request &req,
                                              const std::string &id) const {
    pb::GenerateRequest out;
    out.set_session_id(id);
    if (req.is_chat) {
        auto *chat = out.mutable_chat();
        chat->set_add_generation_prompt(true);
        for (const auto &m : req.messages) protocol::to_proto(m, *chat->add_messages());
        protocol::to_proto(req.chat, *chat->mutable_options());
    } else {
        out.set_prompt(req.prompt);
    }
    auto *ps = out.mutable_sampling();
    protocol::to_proto(req.sampling, *ps);
    uint64_t seed = req.sampling.seed;
    if (!req.has_seed) {
        static thread_local std::mt19937 rng{std::random_device{}()};
        seed = rng();
    }
    ps->set_seed(seed);
    out.set_priority(protocol::to_proto(req.cls));
    for (token_id t : req.prefix_tokens) out.add_prefix_tokens(t);
    out.set_want_prompt_tokens(req.want_prompt_tokens);
    out.set_client_meta(req.client_meta);
    out.set_events_stream(true);
    return out;
}

static start_error from_rejected(const pb::Rejected &r) {
    start_error e;
    e.type    = r.code() == "context_length_exceeded" ? start_error::kind::CONTEXT_LENGTH
                : r.code() == "invalid_request"       ? start_error::kind::INVALID_REQUEST
                : r.code() == "overloaded"            ? start_error::kind::OVERLOADED
                                                      : start_error::kind::INTERNAL;
    e.message = r.message();
    e.param   = r.param();
    return e;
}

// A unary worker call's outcome: false with `err` set when the worker could not be reached
// (UNAVAILABLE) or refused the request (its Rejected reason). Reply: GenerateEvent, EmbedReply.
template <class Reply>
static bool answered(const grpc::Status &st, const Reply &reply, start_error &err) {
    if (!st.ok()) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the inference worker is not available (" + st.error_message() + ")";
        return false;
    }
    if (reply.has_rejected()) {
        err = from_rejected(reply.rejected());
        return false;
    }
    return true;
}

// The request as the worker gets it: volatile lines (a per-request billing header) would
// defeat the prefix cache.
static generate_request without_volatile_lines(const generate_request &req) {
    generate_request norm = req;
    normalize_volatile_lines(norm.messages);
    return norm;
}

std::shared_ptr<session> session_manager::start(const generate_request &req, start_error &err) {
    if (shutting_down_.load()) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the server is shutting down";
        return nullptr;
    }
    const std::string id = new_session_id();
    const auto t0        = std::chrono::steady_clock::now();
    auto ctx             = std::make_shared<grpc::ClientContext>();
    // Give a worker that is (re)starting a few seconds to accept the connection; never wait
    // unbounded (a request must not hang on a dead worker).
    channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5));
    auto preq = to_proto(without_volatile_lines(req), id);
    auto box  = events_->open(id);  // before the call: its first tokens may come before its answer
    std::shared_ptr<grpc::ClientReader<pb::GenerateEvent>> reader(stub_->Generate(ctx.get(), preq));

    pb::GenerateEvent first;
    if (!reader->Read(&first)) {
        events_->close(id, box);
        grpc::Status st = reader->Finish();
        err.type        = start_error::kind::UNAVAILABLE;
        err.message =
            "the inference worker is not available (" + st.error_message() + "); retry shortly";
        return nullptr;
    }
    if (first.has_rejected()) {
        events_->close(id, box);
        err = from_rejected(first.rejected());
        ctx->TryCancel();
        reader->Finish();
        return nullptr;
    }
    const auto &acc = first.accepted();
    settle_source(id, acc, reader, box);
    auto s = std::make_shared<session>(id, req.model, acc.prompt_tokens(), acc.cached_tokens());
    const std::string api = !req.api.empty() ? req.api
                            : req.is_chat    ? "openai.chat"
                                             : "openai.completion";
    const int64_t now_ms  = journal::unix_ms();
    s->set_api(api, now_ms / 1000);
    s->set_client_meta(req.client_meta);
    if (req.want_prompt_tokens)
        s->set_prompt_token_ids({acc.prompt_token_ids().begin(), acc.prompt_token_ids().end()});
    s->set_parse_spec(protocol::from_proto(acc.parse()));
    if (acc.has_parse()) *preq.mutable_journaled_parse() = acc.parse();
    s->set_origin(req.cls, t0);

    // The session row is committed before any of its tokens can be (same writer queue) and
    // before the client hears of the session: a journal that cannot be written refuses it.
    journal::op row;
    row.type              = journal::op::kind::BEGIN;
    row.session           = id;
    row.rec.id            = id;
    row.rec.api           = api;
    row.rec.model         = req.model;
    row.rec.cls           = static_cast<int>(req.cls);
    row.rec.seed          = preq.sampling().seed();
    row.rec.request       = preq.SerializeAsString();
    row.rec.prompt_tokens = acc.prompt_tokens();
    row.rec.cached_tokens = acc.cached_tokens();
    row.rec.created_ms    = now_ms;
    std::promise<std::string> committed;
    row.done = [&committed](bool ok, const std::string &e) {
        committed.set_value(ok ? std::string() : e.empty() ? "unknown error" : e);
    };
    journal_->submit(std::move(row));
    std::string jerr = committed.get_future().get();
    if (!jerr.empty()) {
        if (box) {
            cancel_on_worker(id);
            events_->close(id, box);
        } else {
            ctx->TryCancel();
            reader->Finish();
        }
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the token journal cannot be written (" + jerr + ")";
        return nullptr;
    }
    launch_pump(s, req.cls, t0, std::move(preq), ctx, reader, box);
    return s;
}

bool session_manager::count_prompt_tokens(const generate_request &req, int32_t &tokens,
                                          start_error &err) {
    if (shutting_down_.load()) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the server is shutting down";
        return false;
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    ctx.set_wait_for_ready(true);
    pb::GenerateEvent reply;
    // Counted as start() renders it, so usage adds up to this count.
    grpc::Status st =
        stub_->Render(&ctx, to_proto(without_volatile_lines(req), new_session_id()), &reply);
    if (!answered(st, reply, err)) return false;
    tokens = reply.accepted().prompt_tokens();
    return true;
}

void session_manager::use_journal(std::unique_ptr<journal::writer> j) {
    journal_ = std::move(j);
}

// The chat parse spec is journaled in the request (journaled_parse). A journal written before
// that gets it by rendering its request again on the worker (the same bytes give the same
// spec; this fails while the worker is still loading the model).
void session_manager::restore_meta(session &s, const pb::GenerateRequest &preq) {
    s.set_client_meta(preq.client_meta());
    if (!preq.has_chat()) return;
    if (preq.has_journaled_parse())
        return s.set_parse_spec(protocol::from_proto(preq.journaled_parse()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    ctx.set_wait_for_ready(true);
    pb::GenerateEvent reply;
    if (stub_->Render(&ctx, preq, &reply).ok() && reply.has_accepted())
        s.set_parse_spec(protocol::from_proto(reply.accepted().parse()));
}

size_t session_manager::resume_journaled() {
    if (!journal_->enabled()) return 0;
    size_t n = 0;
    for (auto &stored : journal_->db()->unfinished()) {
        pb::GenerateRequest preq;
        const auto &rec = stored.rec;
        auto s = std::make_shared<session>(rec.id, rec.model, rec.prompt_tokens, rec.cached_tokens);
        s->set_api(rec.api, rec.created_ms / 1000);
        if (!preq.ParseFromString(rec.request)) {
            session_event fe;
            fe.type   = session_event::kind::FINISHED;
            fe.reason = finish_reason::ERROR;
            fe.error  = "the journaled request cannot be read; the session cannot be resumed";
            SF_LOG_ERROR("head", "session %s: %s", rec.id.c_str(), fe.error.c_str());
            journal_finish(s, std::move(fe));
            continue;
        }
        for (auto &t : stored.tokens) s->add_token(std::move(t));
        restore_meta(*s, preq);
        const auto cls = protocol::from_proto(preq.priority());
        s->set_origin(cls, std::chrono::steady_clock::now());
        SF_LOG_INFO("head", "session %s: resuming after a restart at token %zu", rec.id.c_str(),
                    s->token_count());
        launch_pump(s, cls, std::chrono::steady_clock::now(), std::move(preq), nullptr, nullptr,
                    nullptr);
        ++n;
    }
    return n;
}

std::shared_ptr<session> session_manager::find(const std::string &id, bool *interrupted) {
    if (interrupted) *interrupted = false;
    {
        std::lock_guard lk(live_mu_);
        auto it = live_.find(id);
        if (it != live_.end()) {
            if (auto s = it->second.lock()) return s;
        }
    }
    if (!journal_->enabled()) return nullptr;
    auto stored = journal_->db()->load(id);
    if (!stored) return nullptr;
    const auto &rec = stored->rec;
    auto s = std::make_shared<session>(rec.id, rec.model, rec.prompt_tokens, rec.cached_tokens);
    s->set_api(rec.api, rec.created_ms / 1000);
    for (auto &t : stored->tokens) s->add_token(std::move(t));
    if (pb::GenerateRequest preq; preq.ParseFromString(rec.request)) restore_meta(*s, preq);
    if (stored->finish) {
        s->finish(std::move(*stored->finish));
    } else {
        // Re-check: it may have finished (and left live_) since we looked.
        {
            std::lock_guard lk(live_mu_);
            auto it = live_.find(id);
            if (it != live_.end()) {
                if (auto live = it->second.lock()) return live;
            }
        }
        auto again = journal_->db()->load(id);
        if (again && again->finish) return find(id, interrupted);
        if (interrupted) *interrupted = true;
        session_event fe;
        fe.type              = session_event::kind::FINISHED;
        fe.reason            = finish_reason::ERROR;
        fe.error             = "the session was interrupted; it resumes when the server restarts";
        fe.prompt_tokens     = rec.prompt_tokens;
        fe.completion_tokens = static_cast<int32_t>(s->token_count());
        s->finish(std::move(fe));
    }
    return s;
}

std::vector<session_manager::session_info> session_manager::running_sessions() {
    std::vector<session_info> out;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lk(live_mu_);
    for (auto &[id, weak] : live_) {
        auto s = weak.lock();
        if (!s || s->finished()) continue;
        out.push_back({id, s->cls(), s->prompt_tokens(), s->token_count(),
                       std::chrono::duration<double>(now - s->started()).count()});
    }
    return out;
}

bool session_manager::embed(const pb::EmbedRequest &req, pb::EmbedReply &reply, start_error &err) {
    if (shutting_down_.load()) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the server is shutting down";
        return false;
    }
    channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::ClientContext ctx;
    if (!answered(stub_->Embed(&ctx, req, &reply), reply, err)) return false;
    return true;
}

bool session_manager::model_info(pb::ModelInfoReply &out) {
    std::lock_guard lk(info_mu_);
    if (!info_) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
        ctx.set_wait_for_ready(true);
        pb::ModelInfoReply r;
        if (!stub_->ModelInfo(&ctx, pb::ModelInfoRequest{}, &r).ok()) return false;
        info_ = std::move(r);
    }
    out = *info_;
    return true;
}

worker_health session_manager::health() {
    worker_health h;
    grpc::ClientContext ctx;
    // wait_for_ready: ride out a reconnect backoff after a worker (re)start instead of
    // failing at once; the deadline keeps /health prompt when the worker is really down.
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    ctx.set_wait_for_ready(true);
    pb::HealthRequest req;
    h.reachable = stub_->Health(&ctx, req, &h.reply).ok();
    return h;
}

}  // namespace sf
