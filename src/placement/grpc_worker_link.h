// The gRPC half of a worker_client: one channel to a worker (a unix socket for the local child,
// TCP + mutual TLS for a guest node), the Events stream reader and the unary calls (Submit,
// Cancel, Render, Embed, ModelInfo, Health). local_worker and remote_worker own one each and
// add what differs: a supervised child process, or a link whose liveness is watched.
//
// Threads: the public methods are thread-safe. Listener calls come from the link's events
// thread only (started by start_events). mu_ guards the stream state (which Events call is
// open, the call to cancel); the stub is thread-safe.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "session/worker_client.h"
#include "worker.grpc.pb.h"

namespace sf {

class grpc_worker_link {
  public:
    /**
     * `channel`: a channel to the worker's gRPC server; `name`: for log lines; `stream_base`:
     * the first Events call's id is stream_base + 1 (ids stay unique across the links of a
     * node pool, which tells a stream's node from its id).
     */
    grpc_worker_link(std::shared_ptr<grpc::Channel> channel, std::string name,
                     uint64_t stream_base = 0);
    ~grpc_worker_link();

    /** Channel arguments shared by every link: message size, fast reconnects, no BDP probe. */
    static grpc::ChannelArguments channel_args();

    void set_listener(worker_listener *l) { listener_ = l; }
    /** Starts the events thread: one Events call at a time, reopened when it ends. */
    void start_events();
    /** Ends the events thread; no listener call after it returns. */
    void stop();
    /**
     * Ends the Events call being read now (a link judged dead): its placements are reported
     * lost at once instead of when TCP gives up. The next call is opened as usual.
     */
    void cut();

    bool submit(const worker_submission &sub, accepted_session &acc, start_error &err);
    void cancel(const std::string &session_id, uint64_t epoch);
    bool stream_open(uint64_t stream);
    /** True while some Events call is open (the worker is reachable, loaded and registered it). */
    bool any_stream_open();
    /**
     * Waits (bounded) until an Events call is open, woken by its first message (which the
     * worker sends once its model is loaded); its id, or 0 on timeout or stop.
     */
    uint64_t wait_open_stream(std::chrono::milliseconds timeout);
    bool render(const worker_submission &sub, accepted_session &acc, start_error &err);
    bool embed(const embed_batch &job, std::vector<embedding> &out, start_error &err);
    bool model_info(model_description &out);
    /** Health with a deadline (default 0.5 s); waits for a reconnect within it. */
    worker_health health(std::chrono::milliseconds deadline = std::chrono::milliseconds(500));

    uint64_t batches() const { return batches_.load(); }
    uint64_t events() const { return events_.load(); }

  private:
    void read_events();
    // Reads one Events call to its end; true when it was open (its first message came).
    bool read_one_call(uint64_t id);

    std::shared_ptr<grpc::Channel> channel_;
    std::unique_ptr<superfluid::worker::v1::Worker::Stub> stub_;
    std::string name_;
    uint64_t stream_base_;
    worker_listener *listener_ = nullptr;

    std::mutex mu_;
    std::condition_variable cv_;
    uint64_t open_stream_ = 0;  // the Events call being read (its first message came); 0: none
    bool stop_            = false;
    std::shared_ptr<grpc::ClientContext> call_;  // to cancel the read at stop() or cut()
    std::atomic<uint64_t> batches_{0};
    std::atomic<uint64_t> events_{0};
    std::thread events_thread_;
};

}  // namespace sf
