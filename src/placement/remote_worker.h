// A guest node's worker as a worker_client (issue #17): the same worker protocol as the local
// worker (grpc_worker_link.h), dialed by the head over TCP with mutual TLS: the head presents
// its certificate (CN superfluid-head), checks that the guest's is signed by the cluster CA and
// names the node (the target name is overridden with the node's name, its certificate's DNS
// SAN). Liveness: HTTP/2 keepalive pings every second (a dead peer ends the transport within
// ~3 s) and a Health poll every second; k_strikes misses in a row mark the link failing and cut
// the Events call, so its sessions are resubmitted elsewhere at once. No process to supervise:
// the guest (`superfluid join`) runs and restarts its worker itself.
//
// Threads: the public methods are thread-safe; listener calls come from the link's events
// thread; the watchdog thread owns the strike count; mu_ guards the cached health.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "placement/linked_worker.h"

namespace sf {

/** The PEM material the head dials guests with. */
struct tls_identity {
    std::string ca_pem;    // the cluster CA (guests' certificates must chain to it)
    std::string key_pem;   // the head's key
    std::string cert_pem;  // the head's certificate
};

class remote_worker final : public linked_worker {
  public:
    /** Health polls missed in a row (one a second) before the link counts as failing. */
    static constexpr int k_strikes = 3;

    /** `name`: the node's certificate name; `address`: host:port of its worker. */
    remote_worker(std::string name, std::string address, const tls_identity &tls,
                  uint64_t stream_base);
    ~remote_worker() override;

    bool start() override;
    void stop() override;
    /** Refused at once while the link is failing. */
    bool submit(const worker_submission &sub, accepted_session &acc, start_error &err) override;
    /** The last Health poll's answer (never blocks); unreachable while the link is failing. */
    worker_health health() override;
    counters stats() override { return {-1, 0, link_->batches(), link_->events()}; }

    const std::string &address() const { return address_; }
    /** True after k_strikes missed polls, until the next answered one. */
    bool failing() const { return failing_.load(); }

  private:
    void watchdog();

    std::string name_, address_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    worker_health last_;
    std::atomic<bool> failing_{false};
    std::thread watchdog_thread_;
};

}  // namespace sf
