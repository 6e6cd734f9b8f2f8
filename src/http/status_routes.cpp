#include "http/status_routes.h"
#include "http/admission.h"
#include "http/router.h"

#include <cpp-httplib/httplib.h>

#include "api/anthropic/anthropic_models.h"
#include "api/openai/openai_models.h"
#include "api/superfluid/status_view.h"
#include "core/priority.h"
#include "http/error_reply.h"
#include "util/proc_memory.h"

namespace sf {

namespace {

// Prometheus text exposition, one metric family at a time.
class prometheus_text {
  public:
    void family(const char *name, const char *type, const char *help) {
        out_ += std::string("# HELP superfluid:") + name + " " + help +
                "\n# TYPE superfluid:" + name + " " + type + "\n";
    }
    void sample(const char *name, double v, const std::string &labels = "") {
        out_ += std::string("superfluid:") + name + (labels.empty() ? "" : "{" + labels + "}") +
                " " + metric_number(v) + "\n";
    }
    void metric(const char *name, const char *type, const char *help, double v) {
        family(name, type, help);
        sample(name, v);
    }
    std::string &str() { return out_; }

  private:
    std::string out_;
};

// Cluster mode: one series per node (label node="NAME"); nothing without --cluster.
void node_series(prometheus_text &p, const std::vector<node_report> &nodes) {
    if (nodes.empty()) return;
    const auto each = [&](const char *name, const char *type, const char *help, auto value) {
        p.family(name, type, help);
        for (const auto &n : nodes) p.sample(name, double(value(n)), "node=\"" + n.name + "\"");
    };
    each("node_up", "gauge", "1 when the node is active and reachable",
         [](const node_report &n) { return n.state == "active" ? 1 : 0; });
    each("node_slots", "gauge", "concurrent sequences the node runs",
         [](const node_report &n) { return n.slots; });
    each("node_sessions_running", "gauge", "sessions placed on the node and not finished",
         [](const node_report &n) { return n.running; });
    each("node_sessions_placed_total", "counter", "sessions placed on the node (moves included)",
         [](const node_report &n) { return n.placed_total; });
    each("node_last_seen_seconds", "gauge", "seconds since the node last answered",
         [](const node_report &n) { return n.last_seen_s; });
}

std::string metrics_text(session_manager &sessions) {
    auto h        = sessions.health();
    const auto &r = h.status;
    prometheus_text p;
    p.metric("worker_up", "gauge", "1 when the worker answers and its model is loaded",
             h.reachable && r.ready);
    const auto ws = sessions.worker_stats();
    p.metric("worker_starts_total", "counter", "times the worker process was started", ws.starts);
    p.metric("worker_standby", "gauge",
             "1 while a hot standby worker is loaded and waiting (--standby)",
             ws.standby_pid > 0 && ws.standby_ready);
    p.metric("worker_standby_private_bytes", "gauge",
             "the standby's private resident memory (RssAnon: what it costs; the mmapped "
             "model is shared)",
             double(process_private_bytes(ws.standby_pid)));
    p.metric("worker_standby_promotions_total", "counter",
             "times the standby took over from a worker that died", ws.promotions);
    p.metric("num_requests_running", "gauge", "sequences holding a slot", r.active_sequences);
    p.metric("num_requests_waiting", "gauge", "sessions waiting for a slot (new or preempted)",
             r.waiting_sessions);
    p.metric("decode_ticks_total", "counter", "scheduler ticks (one llama_decode each)",
             double(r.ticks));
    p.metric("batched_ticks_total", "counter", "ticks that carried more than one sequence",
             double(r.batched_ticks));
    p.metric("interrupted_ticks_total", "counter",
             "decodes stopped mid-way because an interactive request arrived (redone next tick)",
             double(r.interrupted_ticks));
    p.metric("max_sequences_per_tick", "gauge", "most sequences seen in one tick",
             r.max_sequences_per_tick);
    p.metric("sequences_per_tick", "gauge", "sequences in the last tick",
             r.last_sequences_per_tick);
    p.metric("prompt_tokens_total", "counter", "prompt tokens prefilled",
             double(r.prompt_tokens_total));
    p.metric("generation_tokens_total", "counter", "tokens generated",
             double(r.generated_tokens_total));
    p.metric("num_preemptions_total", "counter",
             "sequences parked to make room for a more urgent class", double(r.preemptions));
    p.metric("kv_cache_usage_perc", "gauge",
             "share of KV cells in use (one pool: a cell several sequences share counts once)",
             kv_cache_usage(r));
    p.metric("kv_cache_used_cells", "gauge", "KV cells in use (tokens held; shared cells once)",
             double(r.kv_used_cells));
    p.metric("kv_cache_cells", "gauge", "KV cells in all (the pool, or streams x context)",
             double(r.kv_total_cells));
    p.metric("kv_cache_bytes_per_token", "gauge",
             "KV cache bytes one token takes (--cache-type-k/-v); 0 for hybrid models",
             double(r.kv_bytes_per_token));
    p.metric("parked_bytes", "gauge", "host memory holding preempted sequences",
             double(r.parked_bytes));
    p.metric("spec_draft_tokens_total", "counter",
             "speculative draft tokens verified (--spec-type)", double(r.spec_drafted_tokens));
    p.metric("spec_accepted_tokens_total", "counter",
             "draft tokens accepted: the tokens the model sampled itself",
             double(r.spec_accepted_tokens));
    p.metric("spec_acceptance_rate", "gauge", "accepted / drafted tokens since the worker started",
             r.spec_drafted_tokens > 0
                 ? double(r.spec_accepted_tokens) / double(r.spec_drafted_tokens)
                 : 0.0);
    p.family("num_requests_running_by_class", "gauge",
             "sequences holding a slot, by priority class");
    for (const auto &c : r.classes)
        p.sample("num_requests_running_by_class", c.running, "priority=\"" + c.name + "\"");
    p.family("num_requests_waiting_by_class", "gauge",
             "sessions waiting for a slot, by priority class");
    for (const auto &c : r.classes)
        p.sample("num_requests_waiting_by_class", c.waiting, "priority=\"" + c.name + "\"");
    p.family("num_preemptions_by_class_total", "counter",
             "preempted sequences, by their priority class");
    for (const auto &c : r.classes) {
        p.sample("num_preemptions_by_class_total", double(c.preemptions),
                 "priority=\"" + c.name + "\"");
    }
    const auto &c = r.cache;
    p.metric("prefix_cache_lookups_total", "counter", "sequences that looked up the prefix cache",
             double(c.lookups));
    p.metric("prefix_cache_hits_total", "counter",
             "sequences that reused at least one cached prompt token", double(c.hits));
    p.metric("prefix_cache_prompt_tokens_total", "counter", "prompt tokens of those sequences",
             double(c.prompt_tokens));
    p.metric("prefix_cache_cached_tokens_total", "counter",
             "prompt tokens reused from the prefix cache instead of prefilled",
             double(c.cached_tokens));
    p.metric("prefix_cache_hit_rate", "gauge", "cached / prompt tokens since the worker started",
             prefix_cache_hit_rate(c));
    p.metric("prefix_cache_ram_bytes", "gauge", "memory held by cached prefixes and snapshots",
             double(c.ram_bytes));
    p.metric("prefix_cache_ram_budget_bytes", "gauge", "--cache-ram", double(c.ram_budget_bytes));
    p.metric("prefix_cache_entries", "gauge", "cached prefixes and snapshots in memory",
             double(c.entries));
    p.metric("prefix_cache_evictions_total", "counter", "entries evicted from memory",
             double(c.evictions));
    p.metric("prefix_cache_disk_bytes", "gauge", "bytes of the disk tier's files",
             double(c.disk_bytes));
    p.metric("prefix_cache_disk_entries", "gauge", "entries of the disk tier",
             double(c.disk_entries));
    p.metric("prefix_cache_disk_writes_total", "counter", "entries written to disk",
             double(c.disk_writes));
    p.metric("prefix_cache_disk_loads_total", "counter", "entries loaded from disk",
             double(c.disk_loads));
    p.metric("prefix_cache_disk_corrupt_total", "counter",
             "disk entries discarded as corrupt (checksum, size or header)",
             double(c.disk_corrupt));
    p.metric("worker_event_batches_total", "counter",
             "messages read from the worker's Events stream (one per tick with events)",
             double(ws.batches));
    p.metric("worker_events_total", "counter",
             "token and finish events read from the Events stream (per batch: sessions per tick)",
             double(ws.events));
    const auto rs = sessions.relay_stats();
    p.metric("worker_events_dropped_total", "counter",
             "events dropped by the head: duplicated, of an earlier placement, or refused",
             double(rs.dropped));
    p.metric("worker_events_refused_total", "counter",
             "events for a session (ended ones too) from a node it is not placed on now, or too "
             "far ahead",
             double(rs.refused));
    p.metric("sessions_ended_unasked_total", "counter",
             "sessions a stopping worker cancelled unasked: moved or resumed, not ended",
             double(rs.unasked_ends));
    node_series(p, sessions.nodes());
    sessions.latency().render(p.str());
    return p.str();
}

}  // namespace

void register_status_routes(http_router &svr, session_manager &sessions,
                            std::vector<std::string> model_ids,
                            std::shared_ptr<connection_stats> connections) {
    svr.Get("/health", [&sessions](const httplib::Request &, httplib::Response &res) {
        const auto h = sessions.health();
        res.status   = h.reachable && h.status.ready ? 200 : 503;
        res.set_content(health_body(h), "application/json");
    });

    // Cluster mode (issue #17): the nodes sessions are placed on (`superfluid nodes`).
    svr.Get("/api/nodes", [&sessions](const httplib::Request &, httplib::Response &res) {
        res.set_content(nodes_body(sessions.nodes()), "application/json");
    });

    // The shape the caller expects: Anthropic's for clients that send anthropic-version,
    // OpenAI's otherwise.
    // OpenAI's entries say what the model reads (text, image, audio) once the worker has
    // reported it; the worker's report is the default model's, so with several models only a
    // one-model server says it.
    svr.Get("/v1/models", [ids = std::move(model_ids), &sessions](const httplib::Request &req,
                                                                  httplib::Response &res) {
        if (dialect_of(req) == api_dialect::ANTHROPIC)
            return res.set_content(anthropic_models_body(ids), "application/json");
        model_description info;
        const bool known = ids.size() == 1 && sessions.model_info(info);
        res.set_content(
            openai_models_body(ids, known ? input_modalities(info) : std::vector<std::string>{}),
            "application/json");
    });

    svr.Get("/metrics", [&sessions, connections](const httplib::Request &, httplib::Response &res) {
        res.set_content(
            metrics_text(sessions) + (connections ? connection_metrics_text(*connections) : ""),
            "text/plain; version=0.0.4");
    });
}

}  // namespace sf
