// Scheduling class of the worker's relay thread: the Events stream's thread (worker_service.cpp),
// woken by the tick thread at the end of every tick, runs as SCHED_BATCH.
//
// Why: on a machine whose cores all run ggml's decode threads, the woken thread preempted the
// tick thread on its own core at once (Linux wakeup preemption): the tick's end took ~0.2 ms
// instead of ~0.03 ms (measured per tick), ~5 % of a one-stream decode step. SCHED_BATCH
// (sched(7)) keeps the thread's fair share but never preempts on wake-up: it runs when a core
// frees up (between decodes) or at the next scheduler tick, so a token may leave up to one
// scheduler tick (4 ms at HZ=250) later. Only this thread: the head's threads stay SCHED_OTHER,
// since each batch-class hop on the first token's path adds that delay to time to first token
// under load. Measured: `superfluid bench throughput` at concurrency 1 (docs/bench.md).
#pragma once

namespace sf {

/**
 * Puts the calling thread in SCHED_BATCH (`on`) or back in SCHED_OTHER. Cheap when the thread
 * is already there (remembered per thread). Never fails loudly: on a system that refuses, the
 * thread keeps its class. Linux only; elsewhere a no-op.
 */
void relay_scheduling(bool on);

}  // namespace sf
