#include "placement/remote_worker.h"

#include "util/log.h"

namespace sf {

remote_worker::remote_worker(std::string name, std::string address, const tls_identity &tls,
                             uint64_t stream_base)
    : name_(std::move(name)), address_(std::move(address)) {
    grpc::SslCredentialsOptions so;
    so.pem_root_certs           = tls.ca_pem;
    so.pem_private_key          = tls.key_pem;
    so.pem_cert_chain           = tls.cert_pem;
    grpc::ChannelArguments args = grpc_worker_link::channel_args();
    // The guest's certificate names the node (DNS SAN), whatever address it is reached at.
    args.SetSslTargetNameOverride(name_);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 2000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(k_silence.count() * 1000));
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    // Separate subchannels per node even when two share an address over time.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto channel = grpc::CreateCustomChannel(address_, grpc::SslCredentials(so), args);
    link_        = std::make_unique<grpc_worker_link>(channel, "node " + name_, stream_base);
}

remote_worker::~remote_worker() {
    stop();
}

bool remote_worker::start() {
    link_->start_events();
    watchdog_thread_ = std::thread([this] { watchdog(); });
    return true;
}

void remote_worker::stop() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (watchdog_thread_.joinable()) watchdog_thread_.join();
    link_->stop();
}

bool remote_worker::submit(const worker_submission &sub, accepted_session &acc, start_error &err) {
    if (failing_.load()) {
        err.type    = start_error::kind::UNAVAILABLE;
        err.message = "node " + name_ + " is unreachable";
        return false;
    }
    return link_->submit(sub, acc, err);
}

worker_health remote_worker::health() {
    std::lock_guard lk(mu_);
    worker_health h = last_;
    // No Events call open: sessions cannot be placed on it (its stream just ended, or the
    // link has not come up yet).
    if (failing_.load() || !link_->any_stream_open()) h.reachable = false;
    return h;
}

// One Health poll a second (deadline 2 s). No answer for k_silence: the link is failing; the
// Events call is cut so its placements are lost now (resumed on another node) rather than when
// TCP gives up. An answer clears it. A missed poll before that keeps the last answer (the
// node stays usable: under packet loss a poll is often late, the node is not gone).
void remote_worker::watchdog() {
    auto answered = std::chrono::steady_clock::now();
    int missed    = 0;
    std::unique_lock lk(mu_);
    while (!stop_) {
        lk.unlock();
        const auto t0   = std::chrono::steady_clock::now();
        worker_health h = link_->health(std::chrono::milliseconds(2000));
        const auto now  = std::chrono::steady_clock::now();
        missed          = h.reachable ? 0 : missed + 1;
        if (h.reachable) answered = now;
        if (h.reachable && failing_.exchange(false))
            SF_LOG_INFO("cluster", "node %s (%s) answers again", name_.c_str(), address_.c_str());
        if (!h.reachable && !failing_.load() && now - answered >= k_silence) {
            SF_LOG_WARN("cluster",
                        "node %s (%s): no health answer for %.0f s (%d checks missed), link "
                        "failing",
                        name_.c_str(), address_.c_str(),
                        std::chrono::duration<double>(now - answered).count(), missed);
            failing_.store(true);
            link_->cut();
        }
        lk.lock();
        if (h.reachable || failing_.load()) last_ = h;
        cv_.wait_until(lk, t0 + std::chrono::seconds(1), [&] { return stop_; });
    }
}

}  // namespace sf
