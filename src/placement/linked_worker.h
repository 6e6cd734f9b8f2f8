// The part of a worker_client that is the gRPC link alone (grpc_worker_link.h): submit,
// cancel, stream state, render, embed, model info and health go straight to the link.
// local_worker and remote_worker derive from it and add a process or a watched link.
// Threads: as grpc_worker_link (every method thread-safe).
#pragma once

#include <memory>

#include "placement/grpc_worker_link.h"
#include "session/worker_client.h"

namespace sf {

class linked_worker : public worker_client {
  public:
    void set_listener(worker_listener *l) override { link_->set_listener(l); }
    bool submit(const worker_submission &sub, accepted_session &acc, start_error &err) override {
        return link_->submit(sub, acc, err);
    }
    void cancel(const std::string &session_id, uint64_t epoch) override {
        link_->cancel(session_id, epoch);
    }
    bool stream_open(uint64_t stream) override { return link_->stream_open(stream); }
    /** Woken by the event stream's first message (sent once the worker's model is loaded). */
    bool wait_ready(std::chrono::milliseconds timeout) override {
        return link_->wait_open_stream(timeout) != 0;
    }
    bool render(const worker_submission &sub, accepted_session &acc, start_error &err) override {
        return link_->render(sub, acc, err);
    }
    bool embed(const embed_batch &job, std::vector<embedding> &out, start_error &err) override {
        return link_->embed(job, out, err);
    }
    bool model_info(model_description &out) override { return link_->model_info(out); }
    worker_health health() override { return link_->health(); }

  protected:
    std::unique_ptr<grpc_worker_link> link_;  // set by the derived constructor
};

}  // namespace sf
