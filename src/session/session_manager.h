// The session layer's front: starts sessions on a worker (through worker_client only), tracks
// them and answers the HTTP side's questions about the worker. It composes the registry (ids,
// running sessions, re-attach from the journal), the relay (events → journal → readers,
// exactly once) and the resumer (resubmits sessions whose worker was lost).
// Threads: HTTP handler threads call any public method concurrently; the relay runs on the
// worker client's event thread, the resumer on its own; no thread per session.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/generate_request.h"
#include "journal/journal_writer.h"
#include "session/latency_metrics.h"
#include "session/retry_index.h"
#include "session/session.h"
#include "session/session_registry.h"
#include "session/session_relay.h"
#include "session/session_resumer.h"
#include "session/worker_client.h"

namespace sf {

class session_manager {
  public:
    /** `worker`: the worker this head places sessions on (placement/local_worker.h). */
    explicit session_manager(std::unique_ptr<worker_client> worker);
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

    /**
     * Retry-resume (retry_index.h; on by default, `serve --no-retry-resume` turns it off): a
     * request equal to one whose session the journal brought back at this start attaches to
     * that session. Call before resume_journaled().
     */
    void set_retry_resume(bool on) { retry_resume_ = on; }

    /**
     * Prefix sharing between API keys (issue #38): true (serve's default when it has several
     * keys, `--cache-share key`) puts each key's requests in a cache scope of their own
     * (session/cache_scope.h); false (`--cache-share all`, or one key or none) shares across
     * keys. A request's `cache_salt` scopes it either way. Call before start().
     */
    void set_cache_share_per_key(bool on) { cache_per_key_ = on; }

    /** Starts the worker and the resumer. Returns false when the worker cannot be started. */
    bool start_worker();
    /** Ends the sessions (shutdown_sessions), stops the resumer, the worker and the journal. */
    void stop();
    /**
     * Server shutdown: every running session finishes with an error now ("the server is
     * shutting down") and its generation is cancelled; new sessions are refused (503).
     */
    void shutdown_sessions();
    bool shutting_down() const { return shutting_down_.load(); }
    /** True when sessions are journaled (and so can be found by id after they finished). */
    bool journaled() const { return journal_->enabled(); }
    /** Where session `id` ran, from the journal (empty without one). Any thread. */
    std::vector<placement_note> placements(const std::string &id) {
        return journal_->enabled() ? journal_->db()->placements(id) : std::vector<placement_note>{};
    }
    /** Bytes the journal's rows take (retention's measure); 0 without a journal. */
    int64_t journal_bytes() { return journal_->enabled() ? journal_->db()->used_bytes_read() : 0; }

    /**
     * Submits a request. On success returns the session, whose events then flow in from the
     * worker's event stream; the prompt has been rendered, tokenized and validated by then.
     * On failure returns nullptr and fills `err` (nothing was generated). A retry of a request
     * whose session was interrupted by a head restart gets that session (set_retry_resume).
     */
    std::shared_ptr<session> start(const generate_request &req, start_error &err);

    /** See session_registry::find. */
    std::shared_ptr<session> find(const std::string &id, bool *interrupted = nullptr) {
        return registry_->find(id, interrupted);
    }

    /** Embeds inputs on the worker; false with `err` when it rejects them or is unavailable. */
    bool embed(const embed_batch &job, std::vector<embedding> &out, start_error &err);
    /** The loaded model's facts, fetched once and cached; false while unavailable. */
    bool model_info(model_description &out);
    /**
     * Renders and tokenizes `req` on the worker exactly as start() would, without generating
     * (Anthropic count_tokens). Returns false with `err` when it cannot.
     */
    bool count_prompt_tokens(const generate_request &req, int32_t &tokens, start_error &err);

    /** Asks the worker for its state (deadline ~0.5 s). */
    worker_health health() { return worker_->health(); }
    /** The worker's process and event-stream counters. */
    worker_client::counters worker_stats() { return worker_->stats(); }
    /** The cluster's nodes (empty without --cluster). */
    std::vector<node_report> nodes() { return worker_->nodes(); }
    /** Loads (or with keep_alive 0 unloads) a model: worker_client::load_model. */
    bool load_model(const std::string &model, int64_t keep_alive_ms, start_error &err) {
        return worker_->load_model(model, keep_alive_ms, err);
    }
    /** The served models and their residency (empty when one model is served). */
    std::vector<model_report> models() { return worker_->models(); }
    /** The cluster node session `id` runs on ("" outside cluster mode or when not placed). */
    std::string session_node(const std::string &id) { return worker_->session_node(id); }
    const latency_metrics &latency() const { return latency_; }
    /** The relay's event counters (session_relay.h): dropped, refused, unasked ends. */
    struct relay_counters {
        uint64_t dropped = 0, refused = 0, unasked_ends = 0;
    };
    relay_counters relay_stats() const {
        return {relay_->dropped(), relay_->refused(), relay_->unasked_ends()};
    }

    /** A running session as `/api/ps` shows it. */
    struct session_info {
        std::string id;
        priority_class cls;
        std::string api;  // the API adapter that started it (e.g. "openai.chat"); may be empty
        std::string user_agent;  // the client's; empty when unknown (e.g. resumed sessions)
        std::string client;      // who made it (session::client); empty when unknown
        int32_t prompt_tokens;
        size_t generated;
        double age_s;
        double ttft_s;  // negative before the first token
    };
    std::vector<session_info> running_sessions();

  private:
    // The submission of a new request: volatile lines removed, a seed when it had none.
    worker_submission make_submission(const generate_request &req, const std::string &id) const;
    // Commits the session's row before anyone hears of it; false with the journal's error.
    bool journal_begin(const session &s, const worker_submission &sub, std::string &error);

    std::unique_ptr<worker_client> worker_;
    latency_metrics latency_;
    std::unique_ptr<journal::writer> journal_ = std::make_unique<journal::writer>(nullptr);
    std::unique_ptr<session_registry> registry_;
    std::unique_ptr<session_relay> relay_;
    std::unique_ptr<session_resumer> resumer_;
    std::atomic<bool> shutting_down_{false};
    bool retry_resume_  = true;
    bool cache_per_key_ = false;
    retry_index retries_;
    std::mutex info_mu_;
    bool have_info_ = false;
    model_description info_;
};

}  // namespace sf
