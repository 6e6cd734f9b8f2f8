#include "worker/worker_main.h"

#include <grpcpp/grpcpp.h>
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "scheduler/scheduler.h"
#include "util/host_buffer.h"
#include "util/log.h"
#include "worker/worker_service.h"

namespace sf {

static std::atomic<bool> g_stop{false};

static void on_signal(int) {
    g_stop.store(true);
}

int run_worker(const worker_options &opts) {
    // The worker never outlives its head.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
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
    std::filesystem::remove(opts.socket_path, ec);
    worker_service service(opts.engine.model_path);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + opts.socket_path, grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
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
    if (!server) {
        SF_LOG_ERROR("worker", "cannot listen on unix:%s", opts.socket_path.c_str());
        return 1;
    }
    SF_LOG_INFO("worker", "pid %d listening on unix:%s", getpid(), opts.socket_path.c_str());

    std::unique_ptr<llama_engine> engine;
    try {
        engine = std::make_unique<llama_engine>(opts.engine);
    } catch (const std::exception &e) {
        SF_LOG_ERROR("worker", "%s", e.what());
        server->Shutdown();
        service.stop_calls();
        return 1;
    }
    cache::cache_options co;
    co.ram_bytes  = opts.cache_ram;
    co.disk_dir   = opts.cache_dir;
    co.disk_bytes = opts.cache_disk;
    if (!co.disk_dir.empty() && co.ram_bytes > 0)
        co.model_fingerprint = cache::model_fingerprint(opts.engine.model_path);
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
    so.max_waiting            = opts.max_waiting;
    so.on_tick_end            = [&service] { service.flush_events(); };
    scheduler sched(*engine, so);
    sched.start();
    llama_embedder embedder(engine->model(), opts.engine.ctx_size, engine->threads());
    service.set_model_extras(&embedder, read_model_facts(engine->model()));
    service.set_ready(engine.get(), &sched, engine->model_name(), &cache);
    SF_LOG_INFO("worker", "ready");

    while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    SF_LOG_INFO("worker", "stopping");
    sched.stop();
    cache.flush();  // hot prefixes queued for the disk tier
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    // No handler runs past this line (Shutdown waits for them; the gate says so in our code):
    // the embedder, scheduler, cache and engine are destroyed on return (call_gate.h).
    service.stop_calls();
    std::filesystem::remove(opts.socket_path, ec);
    return 0;
}

}  // namespace sf
