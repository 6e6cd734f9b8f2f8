// The worker's gRPC service (proto/worker.proto) over one engine and its scheduler.
// Each Submit call runs on a gRPC thread: render + tokenize + validate, submit to the
// scheduler, answer accepted/rejected. The session's events then go out on the head's open
// Events stream (one call, its own gRPC thread), one batch per tick (event_outbox.h); the
// tick thread fills the outbox. Submit without an open Events stream is UNAVAILABLE. An Events
// call sends its first (empty) batch only once the model is loaded: the head's readiness signal.
// Threads: mu_ guards outbox_; engine_/sched_/cache_ are set once before ready_; every handler
// runs inside calls_, closed by stop_calls() before what they use is destroyed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/generate_request.h"
#include "core/submit_result.h"
#include "engine/engine.h"
#include "engine/llama/llama_embedder.h"
#include "engine/llama/model_info.h"
#include "scheduler/scheduler.h"
#include "worker.grpc.pb.h"
#include "worker/call_gate.h"
#include "worker/event_forger.h"
#include "worker/event_outbox.h"

namespace sf {

class worker_service final : public superfluid::worker::v1::Worker::Service {
  public:
    explicit worker_service(std::string model_path);

    /** Called once the model is loaded; from then on sessions are accepted. */
    void set_ready(engine_i *engine, scheduler *sched, std::string model_name,
                   cache::prefix_cache *cache = nullptr);
    /** Embedding and model facts (Embed, ModelInfo); call before set_ready. */
    void set_model_extras(llama_embedder *embedder, model_facts facts);
    /**
     * Refuses later calls (UNAVAILABLE) and returns once no handler runs: after it the engine,
     * scheduler, cache and embedder may be destroyed. Call after grpc::Server::Shutdown.
     */
    void stop_calls();

    /** Accepts a session onto the open Events stream, or rejects it (one answer, unary). */
    grpc::Status Submit(grpc::ServerContext *ctx,
                        const superfluid::worker::v1::GenerateRequest *req,
                        superfluid::worker::v1::SubmitReply *reply) override;
    /** The head's Events stream: runs until the head cancels it or a newer one replaces it. */
    grpc::Status Events(grpc::ServerContext *ctx, const superfluid::worker::v1::EventsRequest *req,
                        grpc::ServerWriter<superfluid::worker::v1::EventBatch> *writer) override;
    /** Tick thread, after each tick: sends the tick's events on the Events stream. */
    void flush_events();
    grpc::Status Cancel(grpc::ServerContext *ctx, const superfluid::worker::v1::CancelRequest *req,
                        superfluid::worker::v1::CancelReply *reply) override;
    /** Renders and tokenizes like Submit; answers accepted (prompt tokens) or rejected. */
    grpc::Status Render(grpc::ServerContext *ctx,
                        const superfluid::worker::v1::GenerateRequest *req,
                        superfluid::worker::v1::SubmitReply *reply) override;
    grpc::Status Health(grpc::ServerContext *ctx, const superfluid::worker::v1::HealthRequest *req,
                        superfluid::worker::v1::HealthReply *reply) override;
    grpc::Status Embed(grpc::ServerContext *ctx, const superfluid::worker::v1::EmbedRequest *req,
                       superfluid::worker::v1::EmbedReply *reply) override;
    grpc::Status ModelInfo(grpc::ServerContext *ctx,
                           const superfluid::worker::v1::ModelInfoRequest *req,
                           superfluid::worker::v1::ModelInfoReply *reply) override;

  private:
    /**
     * Renders/tokenizes the request's input (the placement as protocol/convert reads it);
     * false with `err` filled when it cannot. `check_context`: a prompt that does not fit the
     * context is refused too.
     */
    bool prepare(const worker_submission &sub, rendered_prompt &out, start_error &err,
                 bool check_context = true) const;
    /** The Accepted answer: prompt size, context, the events stream and the chat parse. */
    void accept(const generate_request &req, const rendered_prompt &prompt, uint64_t stream,
                superfluid::worker::v1::SubmitReply &reply) const;

    std::string model_path_;
    std::string model_name_;
    std::atomic<bool> ready_{false};
    engine_i *engine_         = nullptr;
    scheduler *sched_         = nullptr;
    llama_embedder *embedder_ = nullptr;
    model_facts facts_;
    cache::prefix_cache *cache_ = nullptr;

    std::mutex mu_;
    std::condition_variable ready_cv_;      // ready_ became true (under mu_): Events may open
    std::shared_ptr<event_outbox> outbox_;  // the open Events stream's, under mu_
    event_forger forger_;                   // test only (event_forger.h)
    call_gate calls_;
};

}  // namespace sf
