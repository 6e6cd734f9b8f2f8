// Counts the worker service's running gRPC handlers, so that the worker, stopping, waits for
// them before it destroys the engine, scheduler, cache and embedder they use (worker_main.cpp).
// grpc::Server::Shutdown already returns only once every handler has returned, but it waits
// through gRPC's own synchronization (absl::Mutex in Debian's gRPC, uninstrumented), which
// ThreadSanitizer cannot see: it reported a finished Health handler's read of the prefix
// cache against the cache's destructor (issue #20). With the gate that order is our code's,
// stated where it is relied on and seen by the tools. Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

namespace sf {

class call_gate {
  public:
    /** A running call; false when the gate was closed (the call must not start). */
    class pass {
      public:
        pass() = default;
        explicit pass(call_gate *g) : gate_(g) {}
        pass(pass &&o) noexcept : gate_(o.gate_) { o.gate_ = nullptr; }
        pass(const pass &)            = delete;
        pass &operator=(const pass &) = delete;
        pass &operator=(pass &&)      = delete;
        ~pass() {
            if (gate_) gate_->leave();
        }
        explicit operator bool() const { return gate_ != nullptr; }

      private:
        call_gate *gate_ = nullptr;
    };

    pass enter() {
        std::lock_guard lk(mu_);
        if (closed_) return pass{};
        ++running_;
        return pass{this};
    }

    /** Refuses later calls, then waits until no call runs. */
    void close() {
        std::unique_lock lk(mu_);
        closed_ = true;
        idle_.wait(lk, [&] { return running_ == 0; });
    }

  private:
    void leave() {
        std::lock_guard lk(mu_);
        if (--running_ == 0) idle_.notify_all();
    }

    std::mutex mu_;
    std::condition_variable idle_;
    int running_ = 0;
    bool closed_ = false;
};

}  // namespace sf
