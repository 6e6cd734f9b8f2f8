// The local worker as a worker_client: a supervised child process (`superfluid worker …`,
// worker_process.h restarts it with a backoff) spoken to with gRPC over a unix socket.
// One thread reads the worker's Events stream and hands each message to the listener (the
// session relay); a watchdog thread kills a worker that stops answering Health for 10 s
// (hung, SIGSTOPped) so the supervisor restarts it.
//
// Threads: the public methods are thread-safe. Listener calls come from the events thread
// only. mu_ guards the stream state (which Events call is open); the stub is thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "placement/worker_process.h"
#include "session/worker_client.h"
#include "worker.grpc.pb.h"

namespace sf {

class local_worker final : public worker_client {
  public:
    /** `argv`: the worker's command line (argv[0] = executable); `socket_path`: where it listens.
     */
    local_worker(std::vector<std::string> argv, std::string socket_path);
    ~local_worker() override;

    void set_listener(worker_listener *l) override { listener_ = l; }
    bool start() override;
    void stop() override;

    bool submit(const worker_submission &sub, accepted_session &acc, start_error &err) override;
    void cancel(const std::string &session_id, uint64_t epoch) override;
    bool stream_open(uint64_t stream) override;

    bool render(const worker_submission &sub, accepted_session &acc, start_error &err) override;
    bool embed(const embed_batch &job, std::vector<embedding> &out, start_error &err) override;
    bool model_info(model_description &out) override;
    worker_health health() override;
    counters stats() override;

  private:
    void read_events();
    void watchdog();
    // Waits (bounded) until an Events call is open; its id, or 0 on timeout/stop.
    uint64_t wait_open_stream(std::chrono::milliseconds timeout);

    worker_process process_;
    std::string socket_path_;
    std::shared_ptr<grpc::Channel> channel_;
    std::unique_ptr<superfluid::worker::v1::Worker::Stub> stub_;
    worker_listener *listener_ = nullptr;

    std::mutex mu_;
    std::condition_variable cv_;
    uint64_t open_stream_ = 0;  // the Events call being read (its first message came); 0: none
    bool stop_            = false;
    std::shared_ptr<grpc::ClientContext> call_;  // to cancel the read at stop()
    std::atomic<uint64_t> batches_{0};
    std::atomic<uint64_t> events_{0};
    std::thread events_thread_;
    std::thread watchdog_thread_;
};

}  // namespace sf
