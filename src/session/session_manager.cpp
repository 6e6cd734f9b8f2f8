#include "session/session_manager.h"

#include <grpcpp/grpcpp.h>

#include <signal.h>

#include <random>
#include <thread>

#include "cache/volatile_lines.h"
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
    channel_ =
        grpc::CreateCustomChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials(), args);
    stub_ = pb::Worker::NewStub(channel_);
}

session_manager::~session_manager() {
    stop();
}

bool session_manager::start_worker() {
    if (!worker_->start()) return false;
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
    // Pumps end when their streams break; give them a moment so none outlives us.
    for (int i = 0; i < 50 && pumps_.load() > 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
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
    // Volatile lines (a per-request billing header) would defeat the prefix cache.
    generate_request norm = req;
    cache::normalize_volatile_lines(norm.messages);
    auto preq = to_proto(norm, id);
    std::shared_ptr<grpc::ClientReader<pb::GenerateEvent>> reader(stub_->Generate(ctx.get(), preq));

    pb::GenerateEvent first;
    if (!reader->Read(&first)) {
        grpc::Status st = reader->Finish();
        err.type        = start_error::kind::UNAVAILABLE;
        err.message =
            "the inference worker is not available (" + st.error_message() + "); retry shortly";
        return nullptr;
    }
    if (first.has_rejected()) {
        err = from_rejected(first.rejected());
        ctx->TryCancel();
        reader->Finish();
        return nullptr;
    }
    const auto &acc = first.accepted();
    auto s = std::make_shared<session>(id, req.model, acc.prompt_tokens(), acc.cached_tokens());
    s->set_canceller([ctx] { ctx->TryCancel(); });
    pumps_++;
    {
        std::lock_guard lk(live_mu_);
        live_[id] = s;
    }
    s->set_origin(req.cls, t0);
    std::thread([this, s, cls = req.cls, t0, preq, ctx, reader] {
        pump(s, cls, t0, preq, ctx, reader);
    }).detach();
    return s;
}

// Relays one session's events from the worker into `s`. When the worker dies mid-stream, the
// session is resubmitted to the restarted worker with its tokens so far as the resume point;
// events with an index already received are dropped, so readers see one unbroken stream.
void session_manager::pump(std::shared_ptr<session> s, priority_class cls,
                           std::chrono::steady_clock::time_point t0, pb::GenerateRequest preq,
                           std::shared_ptr<grpc::ClientContext> ctx,
                           std::shared_ptr<grpc::ClientReader<pb::GenerateEvent>> reader) {
    constexpr int k_max_resumes = 3;  // a session that keeps crashing its worker fails instead
    int resumes                 = 0;
    bool finished               = false;
    std::string failure;
    std::chrono::steady_clock::time_point last_token_at{};
    for (;;) {
        pb::GenerateEvent ev;
        while (reader->Read(&ev)) {
            if (ev.has_token()) {
                if (ev.token().index() < s->token_count()) continue;  // delivered before a crash
                // Latency as the head sees it: TTFT from the request reaching us, then gaps.
                const auto now = std::chrono::steady_clock::now();
                if (last_token_at == std::chrono::steady_clock::time_point{}) {
                    latency_.observe_ttft(cls, std::chrono::duration<double>(now - t0).count());
                } else {
                    latency_.observe_itl(
                        cls, std::chrono::duration<double>(now - last_token_at).count());
                }
                last_token_at = now;
                s->add_token(protocol::from_proto(ev.token()));
            } else if (ev.has_finished()) {
                s->finish(protocol::from_proto(ev.finished()));
                finished = true;
            }
        }
        grpc::Status st = reader->Finish();
        if (finished) break;
        if (s->cancel_requested() || shutting_down_.load() ||
            st.error_code() == grpc::StatusCode::CANCELLED) {
            failure.clear();
            break;
        }
        failure = "the inference worker stopped during generation (" + st.error_message() + ")";
        if (++resumes > k_max_resumes) {
            failure = "the inference worker failed " + std::to_string(k_max_resumes + 1) +
                      " times during this session; giving up on it";
            break;
        }
        SF_LOG_WARN(
            "head",
            "session %s: worker lost at token %zu; resuming on the restarted worker (%d/%d)",
            s->id().c_str(), s->token_count(), resumes, k_max_resumes);
        // Wait for the restarted worker (restart backoff + model load), bounded.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (std::chrono::steady_clock::now() < deadline && !s->cancel_requested() &&
               !shutting_down_.load()) {
            auto h = health();
            if (h.reachable && h.reply.ready()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (s->cancel_requested() || shutting_down_.load()) {
            failure.clear();
            break;
        }
        preq.clear_resume_tokens();
        for (token_id t : s->token_ids()) preq.add_resume_tokens(t);
        ctx = std::make_shared<grpc::ClientContext>();
        s->set_canceller([ctx] { ctx->TryCancel(); });
        reader.reset(stub_->Generate(ctx.get(), preq).release());
        pb::GenerateEvent first;
        if (!reader->Read(&first) || !first.has_accepted()) {
            // Loop on: Read fails again (counted as another loss) or the worker rejected it.
            if (first.has_rejected()) {
                failure = "the session could not be resumed: " + first.rejected().message();
                reader->Finish();
                break;
            }
        }
    }
    if (!finished) {
        session_event fe;
        fe.type              = session_event::kind::FINISHED;
        fe.reason            = failure.empty() ? finish_reason::CANCELLED : finish_reason::ERROR;
        fe.error             = failure;
        fe.prompt_tokens     = s->prompt_tokens();
        fe.completion_tokens = static_cast<int32_t>(s->token_count());
        if (!failure.empty())
            SF_LOG_WARN("head", "session %s: %s", s->id().c_str(), failure.c_str());
        s->finish(std::move(fe));
    }
    s->set_canceller(nullptr);
    {
        std::lock_guard lk(live_mu_);
        live_.erase(s->id());
    }
    pumps_--;
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
