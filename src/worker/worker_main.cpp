#include "worker/worker_main.h"

#include <grpcpp/grpcpp.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "core/worker_report.h"
#include "engine/scripted/scripted_engine.h"
#include "scheduler/scheduler.h"
#include "util/host_buffer.h"
#include "util/log.h"
#include "worker/worker_service.h"
#include "worker/worker_tls.h"

namespace sf {

static std::atomic<bool> g_stop{false};

static void on_signal(int) {
    g_stop.store(true);
}

// The disk tier's directory per KV cache type: a state saved with one element type cannot be
// loaded into a cache of another. The default (f16/f16) keeps the plain fingerprint, so
// entries written before the option existed stay valid.
static std::string kv_type_suffix(const llama_engine_options &e) {
    if (e.cache_type_k == "f16" && e.cache_type_v == "f16") return "";
    return "-kv-" + e.cache_type_k + "-" + e.cache_type_v;
}

// Builds and starts the gRPC server on the unix socket (a stale socket file is removed first)
// or, for a guest, on `listen` over mutual TLS. Null (logged) when it cannot listen.
static std::unique_ptr<grpc::Server> listen_for_head(const worker_options &opts,
                                                     worker_service &service) {
    std::error_code ec;
    if (!opts.socket_path.empty()) std::filesystem::remove(opts.socket_path, ec);
    grpc::ServerBuilder builder;
    std::string where = "unix:" + opts.socket_path;
    if (!opts.listen.empty()) {
        std::string err;
        auto creds = worker_tls_credentials(opts.tls_cert, opts.tls_key, opts.tls_ca,
                                            "superfluid-head", err);
        if (!creds) {
            SF_LOG_ERROR("worker", "%s", err.c_str());
            return nullptr;
        }
        where = opts.listen;
        builder.AddListeningPort(where, creds);
        // The head pings every second to notice a dead link (remote_worker.h): allow it, and
        // ping back so a vanished head ends the Events call (its sessions are cancelled here).
        builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
        builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
        // Unanswered for 10 s: the head is gone (remote_worker::k_silence, sized for 30 % loss).
        builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 2000);
        builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
        builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    } else {
        builder.AddListeningPort(where, grpc::InsecureServerCredentials());
    }
    builder.RegisterService(&service);
    // A port in use is an error, not shared with the process holding it (gRPC's default).
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    builder.SetMaxReceiveMessageSize(64 << 20);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);  // as the head (session_manager)
    // One completion queue with one idle polling thread. gRPC 1.51's defaults (a queue per
    // core, up to two pollers each) woke every poller for each frame the head sends back (a
    // WINDOW_UPDATE per Events message read): ~100 us of CPU per token on the cores that
    // decode. A poller that takes a call starts a new one, so calls still run concurrently.
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 1);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server)
        SF_LOG_ERROR("worker", "cannot listen on %s", where.c_str());
    else
        SF_LOG_INFO("worker", "pid %d listening on %s", getpid(), where.c_str());
    return server;
}

// A standby worker says it has loaded ('r' on `fd`, a socket pair with the head), then waits
// until the head writes a byte (promotion: true) or closes it or stops us (false).
static bool await_promotion(int fd) {
    if (write(fd, "r", 1) != 1) return false;
    while (!g_stop.load()) {
        pollfd p{fd, POLLIN, 0};
        int r = poll(&p, 1, 100);
        if (r < 0 && errno != EINTR) return false;
        if (r <= 0) continue;
        char b = 0;
        return read(fd, &b, 1) == 1;
    }
    return false;
}

int run_worker(const worker_options &opts) {
    // The worker never outlives its head: worker_process::spawn sets the parent-death signal
    // before exec (SIGKILL for a standby, SIGTERM otherwise); a promoted standby takes SIGTERM
    // below.
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGTERM);
    sigaddset(&stop_set, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &stop_set, nullptr);
    if (getppid() == 1) return 1;  // the head died before we got here
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    // Freed memory stays in the process for the next request instead of going back to the
    // kernel: a fresh page costs a fault (on the 2-core VM, a new sampler's 1.8 MB candidate
    // array took 7 ms to fault in, against 0.3 ms reused). glibc's defaults map anything over
    // 128 KiB afresh and trim the heap above 128 KiB free. One arena: memory freed on one
    // thread (the warm-up on the tick thread, a request's rendering) serves the next request
    // on another; A/B runs of 8 concurrent streams showed no cost in tokens/s.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_ARENA_MAX, 1);

    std::error_code ec;
    worker_service service(opts.engine.model_path);
    // A standby (--standby-fd) loads first and listens only when the head promotes it.
    std::unique_ptr<grpc::Server> server;
    if (opts.standby_fd < 0) {
        server = listen_for_head(opts, service);
        if (!server) return 1;
    }
    std::unique_ptr<llama_engine> llama;
    // What the scheduler, cache and service drive: the model, or (tests) the model under a
    // script of its answers.
    std::unique_ptr<scripted_engine> scripted;
    engine_i *engine = nullptr;
    try {
        llama  = std::make_unique<llama_engine>(opts.engine);
        engine = llama.get();
        if (!opts.scripted_output.empty()) {
            output_script script;
            std::string err;
            if (!load_output_script(opts.scripted_output, script, err))
                throw std::runtime_error("scripted output: " + err);
            SF_LOG_WARN("worker", "scripted output (a test engine): %zu replies from %s",
                        script.replies.size(), opts.scripted_output.c_str());
            scripted = std::make_unique<scripted_engine>(*llama, std::move(script));
            engine   = scripted.get();
        }
    } catch (const std::exception &e) {
        SF_LOG_ERROR("worker", "%s", e.what());
        // With a deadline, as at a normal stop: the head's calls wait for a model that will
        // never be ready, and Shutdown() alone waits for them.
        if (server)
            server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
        service.stop_calls();
        return k_worker_exit_config;
    }
    cache::cache_options co;
    co.ram_bytes  = opts.cache_ram;
    co.disk_dir   = opts.cache_dir;
    co.disk_bytes = opts.cache_disk;
    if (!co.disk_dir.empty() && co.ram_bytes > 0)
        co.model_fingerprint =
            cache::model_fingerprint(opts.engine.model_path) + kv_type_suffix(opts.engine);
    cache::prefix_cache cache(*engine, co);
    // States saved on the tick thread find memory already faulted in (host_buffer.h).
    if (cache.enabled()) host_buffer::keep_reserve(size_t(16) << 20);
    scheduler_options so;
    so.cache = &cache;
    // Decode steps ride on top of the prompt tokens: n_batch = batch_size + parallel.
    so.planner.budget         = engine->n_batch();
    so.planner.prefill_budget = opts.engine.batch_size;
    so.planner.prefill_chunk  = opts.prefill_chunk;
    so.tick_ms                = opts.tick_ms;
    so.aging_ms               = opts.aging_ms;
    so.service                = opts.service;
    so.max_waiting            = opts.max_waiting;
    so.on_tick_end            = [&service] { service.flush_events(); };
    scheduler sched(*engine, so);
    sched.start();
    llama_embedder embedder(llama->model(), llama->n_ctx_seq(), llama->threads());
    model_facts facts        = read_model_facts(llama->model());
    facts.kv_bytes_per_token = llama->kv_bytes_per_token();
    facts.cache_type_k       = opts.engine.cache_type_k;
    facts.cache_type_v       = opts.engine.cache_type_v;
    facts.model_fingerprint  = cache::model_fingerprint(opts.engine.model_path);
    facts.devices            = llama->offload().gpu_layers > 0 ? llama->offload().devices : "CPU";
    facts.gpu_layers         = llama->offload().gpu_layers;
    facts.n_layers           = llama->offload().n_layers;
    if (const media_projector *p = llama->projector()) {
        facts.vision = p->vision();
        facts.audio  = p->audio();
    }
    if (scripted) facts.engine += " (scripted test engine)";
    service.set_model_extras(&embedder, std::move(facts));
    service.set_ready(engine, &sched, llama->model_name(), &cache);
    if (!server) {
        SF_LOG_INFO("worker", "standby: loaded, waiting to be promoted");
        bool promoted = await_promotion(opts.standby_fd);
        if (promoted) server = listen_for_head(opts, service);
        if (!server) {
            sched.stop();
            service.stop_calls();
            return promoted ? 1 : 0;
        }
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        SF_LOG_INFO("worker", "standby promoted");
    }
    SF_LOG_INFO("worker", "ready");

    while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    SF_LOG_INFO("worker", "stopping");
    sched.stop();
    cache.flush();  // hot prefixes queued for the disk tier
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    // No handler runs past this line (Shutdown waits for them; the gate says so in our code):
    // the embedder, scheduler, cache and engine are destroyed on return (call_gate.h).
    service.stop_calls();
    if (!opts.socket_path.empty()) std::filesystem::remove(opts.socket_path, ec);
    return 0;
}

}  // namespace sf
