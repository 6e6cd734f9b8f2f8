#include "worker/worker_service.h"

#include <unistd.h>

#include <chrono>

#include "cache/prefix_cache.h"
#include "engine/sampling_limits.h"
#include "protocol/convert.h"
#include "util/log.h"
#include "util/relay_sched.h"

namespace sf {

namespace pb = superfluid::worker::v1;

worker_service::worker_service(std::string model_path) : model_path_(std::move(model_path)) {}

void worker_service::set_ready(engine_i *engine, scheduler *sched, std::string model_name,
                               cache::prefix_cache *cache) {
    engine_     = engine;
    sched_      = sched;
    cache_      = cache;
    model_name_ = std::move(model_name);
    {
        std::lock_guard lk(mu_);
        ready_.store(true);
    }
    ready_cv_.notify_all();
}

void worker_service::set_model_extras(llama_embedder *embedder, model_facts facts) {
    embedder_ = embedder;
    facts_    = std::move(facts);
}

void worker_service::stop_calls() {
    calls_.close();
}

namespace {
grpc::Status stopping() {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the worker is stopping");
}
}  // namespace

namespace {
start_error refusal(start_error::kind type, std::string message, std::string param = "") {
    return start_error{type, std::move(message), std::move(param)};
}

void reject(const start_error &err, pb::SubmitReply &reply) {
    protocol::to_proto(err, *reply.mutable_rejected());
}
}  // namespace

bool worker_service::prepare(const worker_submission &sub, rendered_prompt &out, start_error &err,
                             bool check_context) const {
    using k                     = start_error::kind;
    const generate_request &req = sub.request;
    const char *input           = req.is_chat ? "messages" : "prompt";
    if (req.is_chat) {
        std::string why;
        if (!engine_->render_chat(req.messages, true, req.chat, out, why)) {
            err = refusal(k::INVALID_REQUEST,
                          "the request cannot be rendered for this model: " + why, "messages");
            return false;
        }
    } else {
        out.tokens = engine_->tokenize(req.prompt, true);
    }
    // Token ids a client gave (Ollama's `context`) are checked against the vocabulary: one
    // outside it would fail llama_decode for the whole batch it lands in.
    const int32_t n_vocab = engine_->n_vocab();
    for (token_id t : req.prefix_tokens) {
        if (t >= 0 && t < n_vocab) continue;
        err = refusal(k::INVALID_REQUEST,
                      "token id " + std::to_string(t) +
                          " in 'context' is outside this model's vocabulary (0.." +
                          std::to_string(n_vocab - 1) + ")",
                      "context");
        return false;
    }
    if (!req.prefix_tokens.empty()) {
        // Ollama's generate `context`: the earlier conversation's tokens, then this prompt
        // (without a second BOS).
        std::vector<token_id> all = req.prefix_tokens;
        const auto bos_only       = engine_->tokenize("", true);
        const bool bos =
            !out.tokens.empty() && !bos_only.empty() && out.tokens.front() == bos_only.front();
        all.insert(all.end(), out.tokens.begin() + (bos ? 1 : 0), out.tokens.end());
        out.tokens = std::move(all);
    }
    if (out.tokens.empty()) {
        err = refusal(k::INVALID_REQUEST, "the prompt is empty", input);
        return false;
    }
    const int64_t n = static_cast<int64_t>(out.tokens.size() + sub.resume_tokens.size());
    if (check_context && n >= engine_->n_ctx_seq()) {
        err = refusal(k::CONTEXT_LENGTH,
                      "the prompt is too long: " + std::to_string(n) + " tokens > " +
                          std::to_string(engine_->n_ctx_seq() - 1) +
                          " maximum (this server's context is " +
                          std::to_string(engine_->n_ctx_seq()) + " tokens per sequence)",
                      input);
        return false;
    }
    return true;
}

void worker_service::accept(const generate_request &req, const rendered_prompt &prompt,
                            uint64_t stream, pb::SubmitReply &reply) const {
    accepted_session acc;
    acc.prompt_tokens = static_cast<int32_t>(prompt.tokens.size());
    acc.n_ctx         = engine_->n_ctx_seq();
    acc.stream        = stream;
    if (req.want_prompt_tokens) acc.prompt_token_ids = prompt.tokens;
    acc.has_parse = req.is_chat;
    if (req.is_chat) acc.parse = prompt.parse;
    protocol::to_proto(acc, *reply.mutable_accepted());
}

grpc::Status worker_service::Submit(grpc::ServerContext *, const pb::GenerateRequest *req,
                                    pb::SubmitReply *reply) {
    const auto call = calls_.enter();
    if (!call) return stopping();
    if (!ready_.load()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "model is loading");
    std::shared_ptr<event_outbox> box;
    {
        std::lock_guard lk(mu_);
        box = outbox_;
    }
    if (!box) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "no Events stream is open");

    worker_submission sub  = protocol::from_proto(*req);
    generate_request &greq = sub.request;
    // Sampling values the engine cannot use are the client's mistake: a 400 now, in every API.
    if (std::string why, param; !check_sampling(greq.sampling, why, param)) {
        reject(refusal(start_error::kind::INVALID_REQUEST, why, param), *reply);
        return grpc::Status::OK;
    }
    const auto t_start = std::chrono::steady_clock::now();
    rendered_prompt prompt;
    if (start_error err; !prepare(sub, prompt, err)) {
        reject(err, *reply);
        return grpc::Status::OK;
    }
    const auto t_prepared = std::chrono::steady_clock::now();
    const auto n_prompt   = static_cast<int32_t>(prompt.tokens.size());
    const std::string &id = sub.session_id;
    auto channel          = std::make_shared<event_channel>(box, id, sub.epoch);
    if (!box->bind(id, sub.epoch, channel))
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the Events stream ended");
    accept(greq, prompt, box->stream_id(), *reply);
    sequence_request sr;
    sr.session_id          = id;
    sr.cls                 = greq.cls;
    sr.client              = greq.client;
    sr.cache_scope         = cache::cache_scope_id(greq.cache_scope);
    sr.prompt              = std::move(prompt.tokens);
    sr.resume_tokens       = std::move(sub.resume_tokens);
    sr.sampling            = std::move(greq.sampling);
    sr.sampling.constraint = prompt.constraint;
    // The grammar compiled here, on this request's thread, not on the tick thread that every
    // running sequence waits on (issue #38 item 4).
    sr.sampler = engine_->prepare_sampler(sr.sampling);
    sr.stops   = sr.sampling.stop;
    sr.stops.insert(sr.stops.end(), prompt.extra_stops.begin(), prompt.extra_stops.end());
    sr.channel = channel;
    // Snapshot points for a prefix cache that cannot cut states back (recurrent/hybrid).
    if (greq.is_chat && cache_ && cache_->enabled() && !cache_->partial()) {
        prompt.tokens = sr.prompt;
        sr.boundaries = engine_->message_boundaries(greq.messages, greq.chat, prompt);
    }
    if (log::enabled(log::level::DEBUG)) {
        using ms                = std::chrono::duration<double, std::milli>;
        const auto t_boundaries = std::chrono::steady_clock::now();
        SF_LOG_DEBUG("worker",
                     "session %s: %d prompt tokens, render+tokenize %.2f ms, %zu message "
                     "boundaries %.2f ms",
                     id.c_str(), n_prompt, ms(t_prepared - t_start).count(), sr.boundaries.size(),
                     ms(t_boundaries - t_prepared).count());
    }
    // Admission control: a full class queue is an overload, answered before any token.
    if (!sched_->submit(std::move(sr))) {
        box->unbind(id, sub.epoch);
        reply->Clear();
        reject(refusal(start_error::kind::OVERLOADED,
                       "too many requests are waiting in this priority class; retry shortly"),
               *reply);
    }
    return grpc::Status::OK;
}

grpc::Status worker_service::Render(grpc::ServerContext *, const pb::GenerateRequest *req,
                                    pb::SubmitReply *reply) {
    const auto call = calls_.enter();
    if (!call) return stopping();
    if (!ready_.load()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "model is loading");
    const worker_submission sub = protocol::from_proto(*req);
    rendered_prompt prompt;
    if (start_error err; !prepare(sub, prompt, err, /*check_context=*/false)) {
        reject(err, *reply);
        return grpc::Status::OK;
    }
    accept(sub.request, prompt, 0, *reply);
    return grpc::Status::OK;
}

grpc::Status worker_service::Events(grpc::ServerContext *ctx, const pb::EventsRequest *req,
                                    grpc::ServerWriter<pb::EventBatch> *writer) {
    const auto call = calls_.enter();
    if (!call) return stopping();
    {
        // The stream's first message tells the head this worker takes sessions: it is sent
        // once the model is loaded, so the head learns readiness from the stream itself
        // (worker_client::wait_ready) instead of polling Health.
        std::unique_lock lk(mu_);
        while (!ready_.load() && !ctx->IsCancelled())
            ready_cv_.wait_for(lk, std::chrono::milliseconds(50));
    }
    if (ctx->IsCancelled()) return grpc::Status::OK;
    auto box = std::make_shared<event_outbox>(req->stream_id());
    std::shared_ptr<event_outbox> old;
    {
        std::lock_guard lk(mu_);
        old     = std::move(outbox_);
        outbox_ = box;
    }
    if (old) old->close();   // a reconnected head: the older stream's sessions are resubmitted
    relay_scheduling(true);  // woken once per tick: it must not preempt decoding (relay_sched.h)
    // An empty first batch: the head knows the stream is open and may submit sessions.
    bool open = writer->Write(pb::EventBatch{});
    if (open && event_forger::enabled()) {  // test only (event_forger.h)
        pb::EventBatch forged;
        for (auto &e : forger_.forge())
            protocol::to_proto(e.ev, e.session_id, e.epoch, *forged.add_events());
        if (forged.events_size() > 0) open = writer->Write(forged);
    }
    std::vector<outbox_event> evs;
    while (open && !ctx->IsCancelled()) {
        evs.clear();
        if (!box->take(evs, std::chrono::milliseconds(50))) {
            if (box->closed()) break;
            continue;
        }
        pb::EventBatch batch;
        for (auto &e : evs) protocol::to_proto(e.ev, e.session_id, e.epoch, *batch.add_events());
        if (!writer->Write(batch)) break;  // the head went away
        box->written();
        if (event_forger::enabled()) forger_.saw(evs);
    }
    {
        std::lock_guard lk(mu_);
        if (outbox_ == box) outbox_.reset();
    }
    box->close();             // cancels the sessions still bound: nobody would read their events
    relay_scheduling(false);  // a pool thread: the next call it serves is not a relay
    return grpc::Status::OK;
}

void worker_service::flush_events() {
    std::shared_ptr<event_outbox> box;
    {
        std::lock_guard lk(mu_);
        box = outbox_;
    }
    if (box) box->flush();
}

grpc::Status worker_service::Cancel(grpc::ServerContext *, const pb::CancelRequest *req,
                                    pb::CancelReply *reply) {
    const auto call = calls_.enter();
    if (!call) return stopping();
    std::shared_ptr<event_outbox> box;
    {
        std::lock_guard lk(mu_);
        box = outbox_;
    }
    reply->set_found(box && box->cancel(req->session_id(), req->epoch()));
    return grpc::Status::OK;
}

grpc::Status worker_service::Health(grpc::ServerContext *, const pb::HealthRequest *,
                                    pb::HealthReply *reply) {
    const auto call = calls_.enter();
    if (!call) return stopping();
    reply->set_ready(ready_.load());
    reply->set_model_path(model_path_);
    reply->set_pid(static_cast<int32_t>(getpid()));
    if (!ready_.load()) return grpc::Status::OK;
    reply->set_model_name(model_name_);
    reply->set_n_ctx(engine_->n_ctx_seq());
    reply->set_n_parallel(engine_->n_seq_max());
    auto st = sched_->stats();
    reply->set_active_sequences(st.active);
    reply->set_waiting_sessions(st.waiting);
    reply->set_ticks(st.ticks);
    reply->set_batched_ticks(st.batched_ticks);
    reply->set_interrupted_ticks(st.interrupted_ticks);
    reply->set_max_sequences_per_tick(st.max_sequences_per_tick);
    reply->set_prompt_tokens_total(st.prompt_tokens);
    reply->set_generated_tokens_total(st.generated_tokens);
    reply->set_preemptions(st.preemptions);
    reply->set_kv_used_cells(st.kv_used);
    reply->set_kv_total_cells(st.kv_total);
    reply->set_kv_bytes_per_token(facts_.kv_bytes_per_token);
    reply->set_cache_type_k(facts_.cache_type_k);
    reply->set_cache_type_v(facts_.cache_type_v);
    reply->set_parked_bytes(engine_->parked_bytes());
    reply->set_last_sequences_per_tick(st.last_sequences_per_tick);
    reply->set_spec_drafted_tokens(st.spec_drafted);
    reply->set_spec_accepted_tokens(st.spec_accepted);
    if (cache_) {
        const auto c = cache_->stats();
        auto *cs     = reply->mutable_cache();
        cs->set_lookups(c.lookups);
        cs->set_hits(c.hits);
        cs->set_prompt_tokens(c.prompt_tokens);
        cs->set_cached_tokens(c.cached_tokens);
        cs->set_ram_bytes(c.ram_bytes);
        cs->set_ram_budget_bytes(c.ram_budget);
        cs->set_entries(c.entries);
        cs->set_evictions(c.evictions);
        cs->set_disk_bytes(c.disk.bytes);
        cs->set_disk_entries(c.disk.entries);
        cs->set_disk_writes(c.disk.writes);
        cs->set_disk_loads(c.disk.loads);
        cs->set_disk_corrupt(c.disk.corrupt);
    }
    for (int c = 0; c < k_classes; ++c) {
        auto *cs = reply->add_classes();
        cs->set_name(k_class_names[c]);
        cs->set_running(st.running_by_class[c]);
        cs->set_waiting(st.waiting_by_class[c]);
        cs->set_preemptions(st.preemptions_by_class[c]);
    }
    return grpc::Status::OK;
}

grpc::Status worker_service::Embed(grpc::ServerContext *, const pb::EmbedRequest *req,
                                   pb::EmbedReply *reply) {
    const auto call = calls_.enter();
    if (!call) return stopping();
    if (!ready_.load() || !embedder_)
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "model is loading");
    std::vector<embed_input> inputs;
    for (const auto &in : req->inputs()) {
        embed_input e;
        e.is_text = in.has_text() || !in.has_tokens();
        if (in.has_text()) e.text = in.text();
        if (in.has_tokens()) e.tokens.assign(in.tokens().ids().begin(), in.tokens().ids().end());
        inputs.push_back(std::move(e));
    }
    std::vector<embed_result> out;
    if (start_error err; !embedder_->embed(inputs, req->truncate(), out, err)) {
        protocol::to_proto(err, *reply->mutable_rejected());
        return grpc::Status::OK;
    }
    for (auto &r : out) {
        auto *e = reply->add_embeddings();
        e->mutable_values()->Add(r.values.begin(), r.values.end());
        e->set_tokens(r.tokens);
    }
    return grpc::Status::OK;
}

grpc::Status worker_service::ModelInfo(grpc::ServerContext *, const pb::ModelInfoRequest *,
                                       pb::ModelInfoReply *reply) {
    const auto call = calls_.enter();
    if (!call) return stopping();
    if (!ready_.load()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "model is loading");
    for (const auto &[k, v] : facts_.metadata) (*reply->mutable_metadata())[k] = v;
    reply->set_chat_template(facts_.chat_template);
    reply->set_n_params(facts_.n_params);
    reply->set_size_bytes(facts_.size_bytes);
    reply->set_n_embd(facts_.n_embd);
    reply->set_n_ctx_train(facts_.n_ctx_train);
    reply->set_architecture(facts_.architecture);
    reply->set_file_type(facts_.file_type);
    reply->set_description(facts_.description);
    reply->set_tokenizer_fingerprint(facts_.tokenizer_fingerprint);
    reply->set_model_fingerprint(facts_.model_fingerprint);
    reply->set_engine(facts_.engine);
    reply->set_devices(facts_.devices);
    reply->set_gpu_layers(facts_.gpu_layers);
    reply->set_n_layers(facts_.n_layers);
    reply->set_vision(facts_.vision);
    reply->set_audio(facts_.audio);
    return grpc::Status::OK;
}

}  // namespace sf
