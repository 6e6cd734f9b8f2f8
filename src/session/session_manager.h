// Starts sessions on the worker and tracks them. Owns the local worker process and the
// gRPC channel to it. Thread-safe: HTTP handler threads call start() concurrently.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "journal/journal_writer.h"
#include "session/latency_metrics.h"
#include "core/generate_request.h"
#include "session/session.h"
#include "session/worker_events.h"
#include "session/worker_process.h"
#include "worker.grpc.pb.h"

namespace sf {

/** Why a session could not start; `code` picks the API's error type and HTTP status. */
struct start_error {
    enum class kind {
        INVALID_REQUEST,
        CONTEXT_LENGTH,
        UNAVAILABLE,
        OVERLOADED,  // the class queue is full: retry later (OpenAI 429 + Retry-After)
        INTERNAL
    } type = kind::INTERNAL;
    std::string message;
    std::string param;
};

struct worker_health {
    bool reachable = false;
    superfluid::worker::v1::HealthReply reply;
};

class session_manager {
  public:
    /** `worker_argv`: how to start the local worker; `socket_path` where it listens. */
    session_manager(std::vector<std::string> worker_argv, std::string socket_path);
    ~session_manager();

    /**
     * The token journal (call before start_worker). Without one, tokens are delivered
     * unjournaled and nothing survives a head restart.
     */
    void use_journal(std::unique_ptr<journal::writer> j);
    /**
     * Head restart: resubmits every session the journal holds as unfinished, with its
     * journaled tokens as the resume point, so it completes (readers re-attach by id).
     * Returns how many were resumed.
     */
    size_t resume_journaled();

    /** Starts the worker process. Returns false when it cannot be spawned. */
    bool start_worker();
    /** Ends the sessions (shutdown_sessions), stops the watchdog and the worker. */
    void stop();
    /**
     * Server shutdown: every running session finishes with an error now ("the server is
     * shutting down") and its generation is cancelled; new sessions are refused (503).
     */
    void shutdown_sessions();
    bool shutting_down() const { return shutting_down_.load(); }
    /** True when sessions are journaled (and so can be found by id after they finished). */
    bool journaled() const { return journal_->enabled(); }

    /**
     * Submits a request. On success returns the session, whose events then flow in on a
     * background thread; the prompt has been rendered, tokenized and validated by then.
     * On failure returns nullptr and fills `err` (nothing was generated).
     */
    std::shared_ptr<session> start(const generate_request &req, start_error &err);

    /**
     * A session by id: a running one of this process, else a finished one read back from the
     * journal; nullptr when unknown. `interrupted`: journaled as unfinished but not running
     * here (its journal write failed; it resumes on the next start).
     */
    std::shared_ptr<session> find(const std::string &id, bool *interrupted = nullptr);

    /**
     * Embeds inputs on the worker (Embed RPC). Vectors are mean-pooled, not normalized.
     * Returns false with `err` when the worker rejects the inputs or is unavailable.
     */
    bool embed(const superfluid::worker::v1::EmbedRequest &req,
               superfluid::worker::v1::EmbedReply &reply, start_error &err);
    /** The loaded model's facts (ModelInfo RPC), fetched once and cached; false if unavailable. */
    bool model_info(superfluid::worker::v1::ModelInfoReply &out);
    /**
     * Renders and tokenizes `req` on the worker exactly as start() would, without generating
     * (Anthropic count_tokens). Returns false with `err` when it cannot.
     */
    bool count_prompt_tokens(const generate_request &req, int32_t &tokens, start_error &err);

    /** Asks the worker for its state (deadline ~1 s). */
    worker_health health();
    worker_process &worker() { return *worker_; }
    const latency_metrics &latency() const { return latency_; }
    /** The worker's Events stream: messages (batches) and events read so far. */
    const worker_events &events() const { return *events_; }

    /** A running session as `/api/ps` shows it. */
    struct session_info {
        std::string id;
        priority_class cls;
        int32_t prompt_tokens;
        size_t generated;
        double age_s;
    };
    std::vector<session_info> running_sessions();

  private:
    superfluid::worker::v1::GenerateRequest to_proto(const generate_request &req,
                                                     const std::string &id) const;
    // The session's events come from `box` (the Events stream) or else `reader` (its Generate
    // call); both null: a session recovered from the journal, submitted by the pump itself.
    void pump(std::shared_ptr<session> s, priority_class cls,
              std::chrono::steady_clock::time_point t0,
              superfluid::worker::v1::GenerateRequest preq,
              std::shared_ptr<grpc::ClientContext> ctx,
              std::shared_ptr<grpc::ClientReader<superfluid::worker::v1::GenerateEvent>> reader,
              std::shared_ptr<event_mailbox> box);
    // Hands a token to the journal; it reaches `s` (and its readers) once committed.
    void journal_token(const std::shared_ptr<session> &s, session_event ev);
    // Journals the finish and waits until `s` has finished (committed or failed).
    void journal_finish(const std::shared_ptr<session> &s, session_event ev);
    void launch_pump(
        std::shared_ptr<session> s, priority_class cls, std::chrono::steady_clock::time_point t0,
        superfluid::worker::v1::GenerateRequest preq, std::shared_ptr<grpc::ClientContext> ctx,
        std::shared_ptr<grpc::ClientReader<superfluid::worker::v1::GenerateEvent>> reader,
        std::shared_ptr<event_mailbox> box);
    // After a Generate call's `accepted`: when the worker put the session on the Events stream,
    // binds `box` and ends the call (reader reset); else forgets `box` (reset).
    void settle_source(
        const std::string &id, const superfluid::worker::v1::Accepted &acc,
        std::shared_ptr<grpc::ClientReader<superfluid::worker::v1::GenerateEvent>> &reader,
        std::shared_ptr<event_mailbox> &box);
    // A pump's token position: what was journaled (or queued to be), the last token's time.
    // Tokens reach it on the pump's thread or, from the Events stream, on the reader's.
    struct token_gate {
        std::mutex mu;
        size_t next_index = 0;
        std::chrono::steady_clock::time_point last_token_at{};
    };
    // One token from the worker: drops one already journaled (before a resume), observes
    // TTFT/ITL, and hands it to the journal.
    void take_token(token_gate &g, const std::shared_ptr<session> &s, priority_class cls,
                    std::chrono::steady_clock::time_point t0,
                    const superfluid::worker::v1::Token &t);
    // How cancelling `s` reaches the worker: through the Events stream's Cancel RPC (and its
    // mailbox's pump stops waiting) when `box` is set, else by cancelling its Generate call.
    void set_canceller(session &s, std::shared_ptr<grpc::ClientContext> ctx,
                       std::shared_ptr<event_mailbox> box);
    // Cancels a session on the worker (Cancel RPC, not waited for).
    void cancel_on_worker(const std::string &id);
    std::string new_session_id();
    /** Sets a journal-restored session's client meta and chat parse spec from its request. */
    void restore_meta(session &s, const superfluid::worker::v1::GenerateRequest &preq);
    latency_metrics latency_;
    std::unique_ptr<journal::writer> journal_ = std::make_unique<journal::writer>(nullptr);

    std::unique_ptr<worker_process> worker_;
    std::string socket_path_;
    std::shared_ptr<grpc::Channel> channel_;
    std::unique_ptr<superfluid::worker::v1::Worker::Stub> stub_;
    std::unique_ptr<worker_events> events_;
    std::atomic<uint64_t> counter_{0};
    std::atomic<int> pumps_{0};
    std::atomic<bool> shutting_down_{false};
    std::mutex info_mu_;
    std::optional<superfluid::worker::v1::ModelInfoReply> info_;

    // Sessions whose events are still flowing (for shutdown).
    std::mutex live_mu_;
    std::map<std::string, std::weak_ptr<session>> live_;

    // Kills a worker that stops answering (hung, SIGSTOPped) so the supervisor restarts it.
    void watchdog();
    std::thread watchdog_;
    std::mutex watchdog_mu_;
    std::condition_variable watchdog_cv_;
    bool watchdog_stop_ = false;
};

}  // namespace sf
