// A guest node's worker as a worker_client (issue #17): the same worker protocol as the local
// worker (grpc_worker_link.h), dialed by the head over TCP with mutual TLS: the head presents
// its certificate (CN superfluid-head), checks that the guest's is signed by the cluster CA and
// names the node (the target name is overridden with the node's name, its certificate's DNS
// SAN). Liveness: HTTP/2 keepalive pings every 2 s (unanswered for k_silence: the transport
// ends) and a Health poll every second; no answer for k_silence marks the link failing and
// cuts the Events call, so its sessions are resubmitted elsewhere at once. A SIGKILLed guest's
// connection resets at once; k_silence is what a silent cut costs. No process to supervise:
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
    /**
     * How long a link may stay silent (no Health answer, no keepalive ack) before it counts as
     * failing. At 30 % packet loss TCP's retransmission backoff (200 ms doubling) stalled a
     * link for up to 6.3 s (tests/integration/cluster_wire.test.mjs, a 45 s soak), and 2–3 s
     * limits moved sessions off a node that was not gone; 10 s leaves room for that.
     */
    static constexpr std::chrono::seconds k_silence{10};

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
    /** True after k_silence without an answer, until the next answered poll. */
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
