#include "placement/grpc_worker_link.h"

#include <algorithm>

#include "protocol/convert.h"
#include "util/log.h"

namespace sf {

namespace pb = superfluid::worker::v1;

grpc_worker_link::grpc_worker_link(std::shared_ptr<grpc::Channel> channel, std::string name,
                                   uint64_t stream_base)
    : channel_(std::move(channel)),
      stub_(pb::Worker::NewStub(channel_)),
      name_(std::move(name)),
      stream_base_(stream_base) {}

grpc_worker_link::~grpc_worker_link() {
    stop();
}

grpc::ChannelArguments grpc_worker_link::channel_args() {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    // Reconnect quickly after a worker restart (defaults back off up to 2 minutes).
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    // No bandwidth-delay probing: it answers a data frame with a PING, which over a local
    // socket carrying one small message per tick is a round trip per message in both processes.
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    return args;
}

void grpc_worker_link::start_events() {
    events_thread_ = std::thread([this] { read_events(); });
}

void grpc_worker_link::stop() {
    std::shared_ptr<grpc::ClientContext> call;
    {
        std::lock_guard lk(mu_);
        stop_ = true;
        call  = call_;
    }
    cv_.notify_all();
    if (call) call->TryCancel();
    if (events_thread_.joinable()) events_thread_.join();
}

void grpc_worker_link::cut() {
    std::shared_ptr<grpc::ClientContext> call;
    {
        std::lock_guard lk(mu_);
        call = call_;
    }
    if (call) call->TryCancel();
}

uint64_t grpc_worker_link::wait_open_stream(std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, timeout, [&] { return stop_ || open_stream_ != 0; });
    return stop_ ? 0 : open_stream_;
}

bool grpc_worker_link::stream_open(uint64_t stream) {
    std::lock_guard lk(mu_);
    return stream != 0 && open_stream_ == stream;
}

bool grpc_worker_link::any_stream_open() {
    std::lock_guard lk(mu_);
    return open_stream_ != 0;
}

// One Events call at a time, reopened when it ends. Its first message (empty) says the worker
// registered it: from then on sessions can be submitted onto it.
void grpc_worker_link::read_events() {
    uint64_t next_id = stream_base_ + 1;
    int failures     = 0;  // Events calls in a row that ended without a message
    for (;;) {
        const bool opened = read_one_call(next_id++);
        // A pause before reopening: short after a stream that was open (a restarted worker
        // should get its stream back at once), growing to 2 s while calls keep failing without
        // one (a worker that refuses the call is not hammered).
        failures         = opened ? 0 : std::min(failures + 1, 6);
        const auto pause = std::chrono::milliseconds(failures == 0 ? 50 : 50 << (failures - 1));
        std::unique_lock lk(mu_);
        if (cv_.wait_for(lk, std::min(pause, std::chrono::milliseconds(2000)),
                         [&] { return stop_; }))
            return;
    }
}

static bool to_worker_event(pb::GenerateEvent &ev, worker_event &we) {
    if (ev.has_token()) {
        we.session_id = std::move(*ev.mutable_token()->mutable_session_id());
        we.epoch      = ev.token().epoch();
        we.ev         = protocol::from_proto(ev.token());
        return true;
    }
    if (ev.has_finished()) {
        we.session_id = std::move(*ev.mutable_finished()->mutable_session_id());
        we.epoch      = ev.finished().epoch();
        we.ev         = protocol::from_proto(ev.finished());
        return true;
    }
    return false;
}

bool grpc_worker_link::read_one_call(uint64_t id) {
    auto call = std::make_shared<grpc::ClientContext>();
    call->set_wait_for_ready(true);  // a (re)starting worker: wait for its socket
    {
        std::lock_guard lk(mu_);
        if (stop_) return false;
        call_ = call;
    }
    pb::EventsRequest req;
    req.set_stream_id(id);
    auto reader = stub_->Events(call.get(), req);
    pb::EventBatch msg;
    bool opened = false;
    std::vector<worker_event> batch;
    while (reader->Read(&msg)) {
        if (!opened) {
            opened = true;
            {
                std::lock_guard lk(mu_);
                open_stream_ = id;
            }
            cv_.notify_all();
        }
        if (msg.events_size() == 0) continue;
        batches_.fetch_add(1, std::memory_order_relaxed);
        events_.fetch_add(static_cast<uint64_t>(msg.events_size()), std::memory_order_relaxed);
        batch.clear();
        for (auto &ev : *msg.mutable_events()) {
            worker_event we;
            if (to_worker_event(ev, we)) batch.push_back(std::move(we));
        }
        if (listener_) listener_->on_events(id, batch);
    }
    const grpc::Status st = reader->Finish();
    {
        std::lock_guard lk(mu_);
        if (open_stream_ == id) open_stream_ = 0;
        call_.reset();
    }
    if (opened) {
        SF_LOG_DEBUG("head", "%s: events stream %llu ended (%s)", name_.c_str(),
                     static_cast<unsigned long long>(id), st.error_message().c_str());
        if (listener_) listener_->on_stream_lost(id);
    }
    return opened;
}

// A unary call's outcome: false with `err` set when the worker could not be reached
// (UNAVAILABLE) or refused the request (its Rejected reason).
template <class Reply>
static bool answered(const grpc::Status &st, const Reply &reply, start_error &err) {
    if (!st.ok()) {
        err.type = start_error::kind::UNAVAILABLE;
        err.message =
            "the inference worker is not available (" + st.error_message() + "); retry shortly";
        return false;
    }
    if (reply.has_rejected()) {
        err = protocol::from_proto(reply.rejected());
        return false;
    }
    return true;
}

bool grpc_worker_link::submit(const worker_submission &sub, accepted_session &acc,
                              start_error &err) {
    // A worker that is (re)starting gets a few seconds to open the stream; never unbounded (a
    // request must not hang on a dead worker).
    if (wait_open_stream(std::chrono::seconds(5)) == 0) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "the inference worker is not available (starting); retry shortly";
        return false;
    }
    pb::GenerateRequest req;
    protocol::to_proto(sub, req);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    pb::SubmitReply reply;
    if (!answered(stub_->Submit(&ctx, req, &reply), reply, err)) return false;
    acc = protocol::from_proto(reply.accepted());
    return true;
}

void grpc_worker_link::cancel(const std::string &session_id, uint64_t epoch) {
    struct call {
        grpc::ClientContext ctx;
        pb::CancelRequest req;
        pb::CancelReply reply;
    };
    auto c = std::make_shared<call>();
    c->req.set_session_id(session_id);
    c->req.set_epoch(epoch);
    c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    stub_->async()->Cancel(&c->ctx, &c->req, &c->reply, [c](grpc::Status) {});
}

bool grpc_worker_link::render(const worker_submission &sub, accepted_session &acc,
                              start_error &err) {
    pb::GenerateRequest req;
    protocol::to_proto(sub, req);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    ctx.set_wait_for_ready(true);
    pb::SubmitReply reply;
    if (!answered(stub_->Render(&ctx, req, &reply), reply, err)) return false;
    acc = protocol::from_proto(reply.accepted());
    return true;
}

bool grpc_worker_link::embed(const embed_batch &job, std::vector<embedding> &out,
                             start_error &err) {
    channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5));
    pb::EmbedRequest req;
    protocol::to_proto(job, req);
    pb::EmbedReply reply;
    grpc::ClientContext ctx;
    if (!answered(stub_->Embed(&ctx, req, &reply), reply, err)) return false;
    out.clear();
    for (const auto &e : reply.embeddings())
        out.push_back({{e.values().begin(), e.values().end()}, e.tokens()});
    return true;
}

bool grpc_worker_link::model_info(model_description &out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    ctx.set_wait_for_ready(true);
    pb::ModelInfoReply r;
    if (!stub_->ModelInfo(&ctx, pb::ModelInfoRequest{}, &r).ok()) return false;
    out = protocol::from_proto(r);
    return true;
}

worker_health grpc_worker_link::health(std::chrono::milliseconds deadline) {
    worker_health h;
    grpc::ClientContext ctx;
    // wait_for_ready: ride out a reconnect backoff after a worker (re)start instead of
    // failing at once; the deadline keeps /health prompt when the worker is really down.
    ctx.set_deadline(std::chrono::system_clock::now() + deadline);
    ctx.set_wait_for_ready(true);
    pb::HealthReply reply;
    h.reachable = stub_->Health(&ctx, pb::HealthRequest{}, &reply).ok();
    if (h.reachable) h.status = protocol::from_proto(reply);
    return h;
}

}  // namespace sf
