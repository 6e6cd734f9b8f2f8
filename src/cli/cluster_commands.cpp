#include "cli/cluster_commands.h"

#include <cpp-httplib/httplib.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "cli/gpu_flags.h"
#include "cli/model_source.h"
#include "cluster/cluster_head.h"
#include "cluster/guest.h"
#include "engine/llama/kv_config.h"
#include "engine/llama/speculation.h"
#include "util/paths.h"
#include "util/secret_source.h"

namespace sf {

void add_serve_cluster_flags(CLI::App &serve, serve_options &so) {
    serve.add_flag("--cluster", so.cluster,
                   "Be a cluster head: open the guest port, print a join token on first start, "
                   "place sessions on the nodes that join");
    serve.add_option("--guest-port", so.guest_port, "Port guests join and register on (TLS)")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    serve.add_option("--guest-host", so.guest_host, "Address the guest port listens on")
        ->capture_default_str();
    serve
        .add_option("--node-lost-after", so.node_lost_after_s,
                    "Seconds a guest may stay unreachable before it is shown lost (revoke or "
                    "re-join it to drop it)")
        ->capture_default_str()
        ->check(CLI::Range(1, 86400));
    serve.add_flag("--no-local-worker{false}", so.local_worker,
                   "With --cluster: run no worker here, only route sessions to guests");
}

void add_cluster_commands(CLI::App &app, cluster_cli &c, serve_options &wf) {
    c.join =
        app.add_subcommand("join", "Join a cluster head as a guest node and serve its sessions");
    c.join->add_option("head", c.head, "The head's guest port, HOST:PORT")->required();
    c.join->add_option("--token", c.token_text,
                       "Join token (sf1.…), needed the first time only. Other local users can "
                       "read it in ps: prefer --token-file or SUPERFLUID_JOIN_TOKEN");
    c.join->add_option("--token-file", c.token_file,
                       "Read the join token from this file (its first line that is not a '#' "
                       "comment); without --token and --token-file, SUPERFLUID_JOIN_TOKEN");
    c.join->add_option("--model", c.model,
                       "The model to serve (a .gguf file or org/repo[:TAG]; default: the head's, "
                       "streamed from it and checked by SHA-256)");
    c.join->add_option("--name", c.name, "Node name asked for (default: the host name)");
    c.join->add_option("--worker-port", c.worker_port, "Port the worker serves the head on (TLS)")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    c.join->add_option("--listen-host", c.listen_host, "Address the worker port binds")
        ->capture_default_str();
    c.join->add_option("--advertise", c.advertise,
                       "Address the head should dial (default: the one it sees us from)");
    c.join
        ->add_option("--parallel", wf.parallel,
                     "Concurrent sequences (0: as many as --kv-memory holds, at most --max-seqs)")
        ->capture_default_str();
    c.join->add_option("--max-seqs", wf.max_seqs, "Most sequences when --parallel is 0")
        ->capture_default_str();
    c.join->add_option("--kv-memory", wf.kv_memory_mib, "MiB of KV cache for auto sequences")
        ->capture_default_str();
    c.join
        ->add_option("--ctx-size,-c", wf.ctx_size,
                     "Most tokens one request may hold (0: the model's training context)")
        ->capture_default_str();
    c.join->add_flag("--kv-unified,!--no-kv-unified", wf.kv_unified,
                     "One KV pool for all sequences (default; --no-kv-unified: a stream each)");
    c.join->add_option("--threads,-t", wf.threads, "CPU threads for inference (0 = all)")
        ->capture_default_str();
    c.join->add_option("--cache-dir", wf.cache_dir, "Prefix cache disk tier (\"off\": none)");
    // The engine's options, as on serve (README): KV cache types, flash attention, speculation.
    c.join->add_option("--cache-type-k", wf.cache_type_k, "KV cache element type of K")
        ->capture_default_str()
        ->check(CLI::IsMember(kv_cache_type_names()));
    c.join->add_option("--cache-type-v", wf.cache_type_v, "KV cache element type of V")
        ->capture_default_str()
        ->check(CLI::IsMember(kv_cache_type_names()));
    c.join->add_option("--flash-attn", wf.flash_attn, "Flash attention: auto, on or off")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "on", "off"}));
    c.join->add_option("--repack", wf.repack, "Weight repacking: on or off (as serve's)")
        ->capture_default_str()
        ->check(CLI::IsMember({"on", "off"}));
    add_gpu_options(*c.join, wf);
    c.join
        ->add_option("--spec-type", wf.spec_type, "Speculative decoding: none, ngram, draft or mtp")
        ->capture_default_str()
        ->check(CLI::IsMember({"none", "ngram", "draft", "mtp"}));
    c.join->add_option("--model-draft", wf.model_draft,
                       "Draft model on this node (a .gguf path or org/repo:QUANT); implies "
                       "--spec-type draft");
    c.join
        ->add_option("--spec-draft-max", wf.spec_draft_max,
                     "Most draft tokens per sequence per tick")
        ->capture_default_str()
        ->check(CLI::Range(1, k_spec_draft_limit));
    c.join->add_option("--scripted-output", wf.scripted_output)->group("");
    c.token        = app.add_subcommand("token", "Join tokens of a cluster head");
    c.token_create = c.token->add_subcommand("create", "Make a join token (printed)");
    c.token->require_subcommand(1);
    c.token_create->add_option("--uses", c.uses, "Joins it allows")->capture_default_str();
    c.token_create->add_option("--ttl", c.ttl_s, "Valid for (e.g. 90m, 24h, 7d; 0: no expiry)")
        ->default_str("24h")
        ->transform(CLI::AsNumberWithUnit(
            std::map<std::string, int64_t>{{"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}},
            CLI::AsNumberWithUnit::CASE_SENSITIVE));
    c.nodes = app.add_subcommand("nodes", "List a cluster head's nodes");
    c.nodes->add_option("--host", c.nodes_host, "Server address")->capture_default_str();
    c.nodes->add_option("--port", c.nodes_port, "Server port")->capture_default_str();
    c.nodes_revoke = c.nodes->add_subcommand(
        "revoke",
        "Revoke a node: the head drops it within a second (its sessions move), and "
        "its certificate and join token are refused from then on");
    c.nodes_revoke->add_option("name", c.revoke_name, "The node's name (superfluid nodes)")
        ->required();
    c.nodes->require_subcommand(0, 1);
    for (auto *s : {c.join, c.token_create, c.nodes_revoke})
        s->add_option("--state-dir", c.state_dir,
                      "State directory (default: $XDG_STATE_HOME/superfluid)");
}

static int run_nodes(const std::string &host, int port) {
    httplib::Client cli(host, port);
    cli.set_connection_timeout(2);
    cli.set_read_timeout(5);
    auto res = cli.Get("/api/nodes");
    if (!res || res->status != 200) {
        std::fprintf(stderr, "no superfluid server answers on %s:%d\n", host.c_str(), port);
        return 1;
    }
    auto j = nlohmann::json::parse(res->body, nullptr, false);
    if (j.is_discarded()) return 1;
    const auto nodes = j.value("nodes", nlohmann::json::array());
    // RUNNING: sessions placed on the node; I/N/B: its scheduler's running sequences per class
    // (interactive/normal/batch); HIT: the share of prompt tokens its prefix cache reused.
    std::printf("%-16s %-21s %-8s %-22s %-17s %5s %7s %-8s %5s %10s %s\n", "NAME", "ADDRESS",
                "STATE", "ENGINE", "MODEL", "SLOTS", "RUNNING", "I/N/B", "HIT", "LAST SEEN",
                "CERT SERIAL");
    for (const auto &n : nodes) {
        const double seen = n.value("last_seen_s", -1.0);
        char seen_text[32], classes[32];
        std::snprintf(seen_text, sizeof seen_text, seen < 0 ? "never" : "%.1fs ago", seen);
        const auto by = n.value("running_by_class", nlohmann::json::object());
        std::snprintf(classes, sizeof classes, "%d/%d/%d", by.value("interactive", 0),
                      by.value("normal", 0), by.value("batch", 0));
        std::printf("%-16s %-21s %-8s %-22s %-17s %5d %7d %-8s %4.0f%% %10s %s\n",
                    n.value("name", "").c_str(),
                    n.value("address", "").empty() ? "(this host)" : n.value("address", "").c_str(),
                    n.value("state", "").c_str(), n.value("engine", "").substr(0, 22).c_str(),
                    n.value("model_fingerprint", "").substr(0, 16).c_str(), n.value("slots", 0),
                    n.value("running", 0), classes, 100.0 * n.value("cache_hit_rate", 0.0),
                    seen_text, n.value("certificate_serial", "").c_str());
        if (!n.value("message", "").empty()) std::printf("  %s\n", n.value("message", "").c_str());
    }
    if (nodes.empty()) std::printf("(not a cluster head: serve --cluster)\n");
    return 0;
}

// The join token: --token, else --token-file, else SUPERFLUID_JOIN_TOKEN ("" when none). False
// when --token-file cannot be read.
static bool join_token(const cluster_cli &c, std::string &token) {
    token = c.token_text;
    if (token.empty() && !c.token_file.empty()) {
        std::vector<std::string> found;
        std::string err, warning;
        if (!read_secrets_file(c.token_file, found, err, warning)) {
            std::fprintf(stderr, "--token-file: %s\n", err.c_str());
            return false;
        }
        if (!warning.empty()) std::fprintf(stderr, "warning: --token-file: %s\n", warning.c_str());
        token = found.front();
    }
    if (token.empty()) {
        const auto env = secrets_from_env("SUPERFLUID_JOIN_TOKEN");
        if (!env.empty()) token = env.front();
    }
    return true;
}

static int run_join(cluster_cli &c, const serve_options &wf) {
    cluster::guest_options g;
    g.head = c.head;
    if (!join_token(c, g.token)) return 1;
    g.state_dir   = c.state_dir.empty() ? paths::default_state_dir() : c.state_dir;
    g.name        = c.name;
    g.worker_port = c.worker_port;
    g.listen_host = c.listen_host;
    g.advertise   = c.advertise;
    paths::make_files_private();  // the guest's certificate, key and fetched model: 0600/0700
    if (!paths::make_private_dirs(g.state_dir)) {
        std::fprintf(stderr, "cannot create the state directory %s\n", g.state_dir.c_str());
        return 1;
    }
    // No --model: the head's model, fetched once joined (cluster/model_transfer.h).
    if (!c.model.empty()) {
        resolved_model resolved;
        if (!resolve_model_arg(c.model, g.state_dir, resolved)) return 1;
        g.model_path = resolved.path;
    }
    serve_options w = wf;
    if (!w.model_draft.empty()) {  // resolved here, on the guest, like its --model
        resolved_model draft;
        if (!resolve_model_arg(w.model_draft, g.state_dir, draft)) return 1;
        w.model_draft = draft.path;
        if (w.spec_type == "none") w.spec_type = "draft";
    }
    if (w.spec_type == "draft" && w.model_draft.empty()) {
        std::fprintf(stderr, "--spec-type draft needs --model-draft FILE\n");
        return 2;
    }
    g.worker_argv = [w](const std::string &path) { return worker_argv(w, path); };
    return cluster::run_guest(g);
}

int run_cluster_command(cluster_cli &c, const serve_options &wf) {
    if (c.join && *c.join) return run_join(c, wf);
    if (c.token_create && *c.token_create)
        return cluster::create_token_command(
            c.state_dir.empty() ? paths::default_state_dir() : c.state_dir, c.uses, c.ttl_s);
    if (c.nodes_revoke && *c.nodes_revoke)
        return cluster::revoke_node_command(
            c.state_dir.empty() ? paths::default_state_dir() : c.state_dir, c.revoke_name);
    if (c.nodes && *c.nodes) return run_nodes(c.nodes_host, c.nodes_port);
    return -1;
}

}  // namespace sf
