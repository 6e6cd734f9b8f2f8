// Entry point of the worker process (`superfluid worker …`), started by the head.
#pragma once

#include <string>

#include "engine/llama/llama_engine.h"
#include "scheduler/service_policy.h"

namespace sf {

struct worker_options {
    llama_engine_options engine;
    std::string socket_path;  // unix socket the gRPC server listens on ("" : none)
    // A guest node (issue #17): TCP address (host:port) served over mutual TLS instead, with
    // the node's certificate and key and the cluster CA (PEM files; worker_tls.h).
    std::string listen;
    std::string tls_cert, tls_key, tls_ca;
    int32_t prefill_chunk = 512;    // most prompt tokens one sequence gets per tick
    int32_t tick_ms       = 30;     // target duration of a tick with prefill (0: fixed budget)
    int64_t aging_ms      = 10000;  // a sequence unserved this long counts one class more urgent
    service_options service;        // fairness within a class (scheduler/service_policy.h)
    int32_t max_waiting = 1024;     // waiting sessions per class before overload errors
    int64_t cache_ram   = int64_t(4096) << 20;  // prefix cache memory budget, bytes (0: off)
    std::string cache_dir;                      // prefix cache disk tier ("" : none)
    int64_t cache_disk = int64_t(8192) << 20;   // disk tier bound, bytes
    // A hot standby (placement/worker_process.h): loads the model, sends 'r' on this inherited
    // socket, then waits for a byte before it listens on socket_path; EOF = never promoted,
    // exit. -1: not one.
    int standby_fd = -1;
    std::string scripted_output;  // tests: a script of the answers (engine/scripted/), "" = off
};

/**
 * Serves the worker protocol on `socket_path` (or on `listen` over mutual TLS): answers Health at
 * once (ready=false while loading), loads the model, then accepts sessions until SIGTERM/SIGINT or
 * the parent dies. A standby (`standby_fd` ≥ 0) loads first and listens only once promoted. Returns
 * the process exit code (0 on a clean stop, 1 when the model cannot be loaded).
 */
int run_worker(const worker_options &opts);

}  // namespace sf
