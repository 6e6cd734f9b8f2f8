#include "cli/serve_command.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <thread>

#include "api/common/client_identity.h"
#include "cli/model_source.h"
#include "cli/port_check.h"
#include "cli/serve_models.h"
#include "cluster/cluster_head.h"
#include "http/http_server.h"
#include "http/origin_policy.h"
#include "journal/journal_open.h"
#include "mkmodel.h"
#include "models/gguf_info.h"
#include "placement/local_worker.h"
#include "placement/node_pool.h"
#include "placement/worker_process.h"
#include "session/session_manager.h"
#include "util/log.h"
#include "util/paths.h"
#include "util/secret_source.h"
#include "util/state_lock.h"

namespace sf {

std::string ensure_default_model(const std::string &state_dir, std::string &error) {
    const std::string dir  = state_dir + "/models";
    const std::string path = dir + "/" + kEmbeddedModelName + ".gguf";
    if (std::filesystem::exists(path)) return path;
    if (!paths::make_dirs(dir)) {
        error = "cannot create " + dir;
        return {};
    }
    SF_LOG_INFO("serve", "writing the embedded default model to %s", path.c_str());
    mkmodel::options o;
    o.preset = "tiny";
    o.arch   = "qwen3";
    o.seed   = 1;
    // Its answers end: the end-of-turn token's embedding scaled up (mkmodel --eog-scale), so a
    // chat or an agent's turn gets an answer of some tens of tokens (10 chats: 5 to 224), not
    // random text to the end of the context (issue #36: Cline and OpenClaw ran out of context
    // and retried, or ran for ten minutes, on the unscaled model).
    o.eog_scale = 32.0f;
    // And never at once: an empty answer is what a newcomer's first chat would see as broken,
    // and agents fail such a turn (OpenClaw exits 1; 3 of 15 of its turns began with the end).
    o.nonempty_answers = true;
    error              = mkmodel::write_model(o, path);
    return error.empty() ? path : std::string{};
}

bool parse_size_mib(const std::string &text, int64_t &bytes) {
    size_t end = 0;
    double v   = 0;
    try {
        v = std::stod(text, &end);
    } catch (const std::exception &) {
        return false;
    }
    std::string unit = text.substr(end);
    for (auto &c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double mul = 0;
    if (unit.empty() || unit == "m" || unit == "mb" || unit == "mib")
        mul = 1 << 20;
    else if (unit == "b")
        mul = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib")
        mul = 1 << 10;
    else if (unit == "g" || unit == "gb" || unit == "gib")
        mul = 1 << 30;
    if (mul == 0 || !(v >= 0) || v * mul > 9e18) return false;
    bytes = static_cast<int64_t>(v * mul);
    return true;
}

std::string self_exe() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, n) : std::string("superfluid");
}

// The journal writer for `opts` (a disabled one with --journal off or when none can be created).
static std::unique_ptr<journal::writer> open_journal(const serve_options &opts) {
    if (!opts.journal) {
        SF_LOG_WARN("serve",
                    "journaling is off: tokens are not persisted, no resume after a restart");
        return std::make_unique<journal::writer>(nullptr);
    }
    journal::options jo;
    jo.path      = opts.state_dir + "/journal.db";
    jo.sync      = opts.journal_sync == "off"    ? journal::sync_mode::OFF
                   : opts.journal_sync == "full" ? journal::sync_mode::FULL
                                                 : journal::sync_mode::NORMAL;
    jo.max_age_s = opts.journal_max_age_s;
    jo.max_bytes = opts.journal_max_bytes;
    jo.max_pages = opts.journal_max_pages;
    auto db      = journal::open_journal(jo);
    if (db)
        SF_LOG_INFO("serve", "journal %s (sync %s)", jo.path.c_str(),
                    journal::sync_mode_name(jo.sync));
    return std::make_unique<journal::writer>(std::move(db));
}

std::vector<std::string> worker_argv(const serve_options &opts, const std::string &model) {
    std::vector<std::string> argv = {self_exe(),        "worker",
                                     "--model",         model,
                                     "--ctx-size",      std::to_string(opts.ctx_size),
                                     "--parallel",      std::to_string(opts.parallel),
                                     "--max-seqs",      std::to_string(opts.max_seqs),
                                     "--kv-memory",     std::to_string(opts.kv_memory_mib),
                                     "--batch-size",    std::to_string(opts.batch_size),
                                     "--prefill-chunk", std::to_string(opts.prefill_chunk),
                                     "--tick-ms",       std::to_string(opts.tick_ms),
                                     "--threads",       std::to_string(opts.threads),
                                     "--aging-ms",      std::to_string(opts.aging_ms),
                                     "--max-queue",     std::to_string(opts.max_queue)};
    // Fairness within a class (scheduler/service_policy.h).
    argv.insert(argv.end(), {"--service-half-life-ms", std::to_string(opts.service_half_life_ms),
                             "--preempt-quantum", std::to_string(opts.preempt_quantum),
                             "--min-share", std::to_string(opts.min_share)});
    // Prefix cache: memory budget, disk tier (the XDG cache directory unless told otherwise).
    std::string cache_dir = opts.cache_dir;
    if (cache_dir.empty()) cache_dir = paths::default_cache_dir() + "/prefix-cache";
    if (cache_dir == "off") cache_dir.clear();
    argv.insert(argv.end(), {"--cache-ram-bytes", std::to_string(opts.cache_ram), "--cache-dir",
                             cache_dir, "--cache-disk-bytes", std::to_string(opts.cache_disk)});
    argv.insert(argv.end(),
                {"--cache-type-k", opts.cache_type_k, "--cache-type-v", opts.cache_type_v,
                 "--flash-attn", opts.flash_attn, "--repack", opts.repack});
    argv.insert(argv.end(),
                {"--gpu-layers", opts.gpu_layers, "--main-gpu", std::to_string(opts.main_gpu)});
    if (!opts.tensor_split.empty()) argv.insert(argv.end(), {"--tensor-split", opts.tensor_split});
    if (opts.spec_type != "none")
        argv.insert(argv.end(), {"--spec-type", opts.spec_type, "--spec-draft-max",
                                 std::to_string(opts.spec_draft_max)});
    if (!opts.model_draft.empty()) argv.insert(argv.end(), {"--model-draft", opts.model_draft});
    if (!opts.mmproj.empty()) argv.insert(argv.end(), {"--mmproj", opts.mmproj});
    if (!opts.scripted_output.empty())
        argv.insert(argv.end(), {"--scripted-output", opts.scripted_output});
    if (opts.kv_unified) argv.push_back("--kv-unified");
    return argv;
}

void cap_ctx_size(serve_options &opts, const std::string &model_path) {
    models::gguf_summary s;
    std::string error;
    if (opts.ctx_size <= 0 || !models::read_gguf_summary(model_path, s, error) ||
        s.context_length == 0 || uint64_t(opts.ctx_size) <= s.context_length)
        return;
    const int trained = int(std::min<uint64_t>(s.context_length, uint64_t(opts.ctx_size)));
    if (opts.ctx_size_given)
        SF_LOG_WARN("serve",
                    "--ctx-size %d is more than the model was trained for (%d tokens): capped at "
                    "%d, no KV memory is reserved beyond it",
                    opts.ctx_size, trained, trained);
    else
        SF_LOG_INFO("serve", "context per sequence: %d tokens, the model's training context",
                    trained);
    opts.ctx_size = trained;
}

// `--FLAG`'s file and environment variable `env` added to `keys`. The file and the variable keep
// keys out of the command line, which every local user can read.
static bool gather_keys(const char *flag, const std::string &file, const char *env,
                        std::vector<std::string> &keys) {
    if (!file.empty()) {
        std::string err, warning;
        if (!read_secrets_file(file, keys, err, warning)) {
            SF_LOG_ERROR("serve", "--%s: %s", flag, err.c_str());
            return false;
        }
        if (!warning.empty()) SF_LOG_WARN("serve", "--%s: %s", flag, warning.c_str());
    }
    for (auto &k : secrets_from_env(env)) keys.push_back(std::move(k));
    return true;
}

int run_serve(const serve_options &in) {
    paths::make_files_private();  // journal, prefix cache, cluster keys: 0600/0700
    serve_options opts = in;
    if (opts.state_dir.empty()) opts.state_dir = paths::default_state_dir();
    if (!paths::make_private_dirs(opts.state_dir)) {
        SF_LOG_ERROR("serve", "cannot create the state directory %s", opts.state_dir.c_str());
        return 1;
    }
    state_lock lock;
    if (std::string err; !lock.acquire(opts.state_dir, err)) {
        SF_LOG_ERROR("serve", "%s", err.c_str());
        return 1;
    }
    // A port already held is refused before a model is pulled or loaded.
    if (std::string err = check_listen_address(opts.host, opts.port); !err.empty()) {
        SF_LOG_ERROR("serve", "%s", err.c_str());
        return 1;
    }
    if (!gather_keys("api-key-file", opts.api_key_file, "SUPERFLUID_API_KEY", opts.api_keys) ||
        !gather_keys("admin-key-file", opts.admin_key_file, "SUPERFLUID_ADMIN_KEY",
                     opts.admin_keys))
        return 1;
    std::string identity_secret;  // keys the journaled client ids (api/common/client_identity.h)
    if (std::string err; !load_identity_secret(opts.state_dir, identity_secret, err)) {
        SF_LOG_ERROR("serve", "%s", err.c_str());
        return 1;
    }
    // .gguf paths, hub models (pulled when missing) or the default model (cli/serve_models.h).
    served_models served;
    if (!resolve_served_models(opts, served)) return 1;
    if (opts.cluster && served.list.size() > 1) {
        SF_LOG_ERROR("serve", "--cluster serves one model (several models: issue #40, not yet)");
        return 1;
    }
    const resolved_model resolved = served.default_model();
    const std::string model       = resolved.path;
    if (!opts.model_draft.empty()) {  // --model-draft: a path or a hub model, as the model
        resolved_model draft;
        if (!resolve_model_arg(opts.model_draft, opts.state_dir, draft)) return 1;
        opts.model_draft = draft.path;
    }

    // Block the stop signals in every thread; one thread waits for them.
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_set, nullptr);
    signal(SIGPIPE, SIG_IGN);

    // Unix socket paths are limited to 107 bytes, so not under a possibly deep state dir.
    const std::string sock =
        "/tmp/superfluid-" + std::to_string(getuid()) + "-" + std::to_string(getpid()) + ".sock";
    standby_mode standby = standby_mode::automatic;
    parse_standby_mode(opts.standby, standby);  // the CLI accepts only valid names
    // Cluster mode: the local worker is one node of a pool that guests join.
    std::unique_ptr<worker_client> worker;
    node_pool *pool = nullptr;
    if (opts.cluster) {
        serve_options local = opts;
        cap_ctx_size(local, model);
        std::vector<std::string> argv = worker_argv(local, model);
        argv.insert(argv.end(), {"--socket", sock});
        auto p = std::make_unique<node_pool>();
        p->set_lost_after(std::chrono::seconds(opts.node_lost_after_s));
        if (opts.local_worker)
            p->add_node(
                "local", "",
                [argv, sock, standby](uint64_t base) {
                    return std::make_unique<local_worker>(argv, sock, base, standby);
                },
                true);
        pool   = p.get();
        worker = std::move(p);
    } else {
        worker = make_model_workers(opts, served, sock, standby);
    }
    session_manager sessions(std::move(worker));
    sessions.use_journal(open_journal(opts));
    if (!sessions.start_worker()) {
        SF_LOG_ERROR("serve", "cannot start the worker process");
        return 1;
    }
    cluster::cluster_head head;
    if (pool && !head.start(opts.state_dir, opts.guest_host, opts.guest_port, *pool, model)) {
        sessions.stop();
        return 1;
    }
    sessions.set_retry_resume(opts.retry_resume);
    // With several keys, a key's cached prompts are its own unless --cache-share all says so.
    sessions.set_cache_share_per_key(opts.cache_share == "key" && opts.api_keys.size() > 1);
    if (size_t n = sessions.resume_journaled())
        SF_LOG_INFO("serve", "resuming %zu unfinished sessions from the journal", n);

    http_options ho;
    ho.host             = opts.host;
    ho.port             = opts.port;
    ho.threads          = opts.http_threads;
    ho.header_timeout_s = opts.header_timeout_s;
    ho.api_keys         = opts.api_keys;
    ho.admin_keys       = opts.admin_keys;
    ho.identity_secret  = identity_secret;
    ho.cors_origins     = opts.cors_origins;
    ho.allowed_hosts    = opts.allowed_hosts;
    if (!is_loopback_host(opts.host) && opts.api_keys.empty() && opts.admin_keys.empty())
        SF_LOG_WARN("serve",
                    "listening on %s, beyond this machine, with no --api-key: anyone who can "
                    "reach the port can use the model",
                    opts.host.c_str());
    ho.max_body_bytes = opts.max_body_bytes;
    ho.model_path     = model;
    ho.model_id       = resolved.name;
    for (size_t i = 0; i < served.list.size(); ++i)
        ho.models.push_back({served.list[i].name, served.list[i].path, served.general_names[i]});
    ho.state_dir              = opts.state_dir;
    ho.strict_model_names     = opts.strict_model_names;
    ho.priority.default_class = opts.default_priority;
    if (!opts.config_file.empty()) {
        std::string err = load_priority_config(opts.config_file, ho.priority);
        if (!err.empty()) {
            SF_LOG_ERROR("serve", "%s", err.c_str());
            sessions.stop();
            return 1;
        }
    }
    http_server http(sessions, ho);

    std::atomic<bool> listen_failed{false};
    std::thread waiter([&] {
        int sig = 0;
        sigwait(&stop_set, &sig);
        // A failed bind sends the SIGTERM that ends this wait: no signal came from outside.
        if (!listen_failed) SF_LOG_INFO("serve", "signal %d: shutting down", sig);
        // Running sessions end now (streams get an in-band error and [DONE], waiting
        // requests a 503), so the request threads are free for stop() to join.
        sessions.shutdown_sessions();
        http.stop();
    });
    bool ok = http.listen();
    if (!ok) {
        listen_failed = true;
        kill(getpid(), SIGTERM);  // release the waiter
    }
    waiter.join();
    head.stop();  // no node joins while the pool stops
    sessions.stop();
    return ok && !worker_process::config_failed() ? 0 : 1;
}

}  // namespace sf
