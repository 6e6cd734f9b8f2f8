#include "cluster/guest.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "cluster/join_client.h"
#include "cluster/model_transfer.h"
#include "placement/worker_process.h"
#include "util/log.h"
#include "util/port_probe.h"

namespace sf::cluster {

static std::string host_name() {
    char buf[256] = {0};
    gethostname(buf, sizeof buf - 1);
    return buf[0] ? buf : "node";
}

// The registration loop: every 2 s until a stop signal; returns the exit code.
static int heartbeat(const guest_options &opts, const node_credentials &creds,
                     const sigset_t &stop_set) {
    register_result::state last = register_result::state::PENDING;
    bool reached_before         = false;
    for (;;) {
        register_result r = register_node(opts.head, creds, opts.worker_port, opts.advertise);
        if (r.reached && r.st == register_result::state::REFUSED) {
            SF_LOG_ERROR("guest", "the head refused this node: %s", r.message.c_str());
            return 3;
        }
        if (r.reached && (!reached_before || r.st != last))
            SF_LOG_INFO("guest", "registered with %s as %s (%s)", opts.head.c_str(),
                        creds.name.c_str(),
                        r.st == register_result::state::ACTIVE ? "active" : "pending");
        if (!r.reached && reached_before)
            SF_LOG_WARN("guest", "the head %s does not answer (%s); retrying", opts.head.c_str(),
                        r.message.c_str());
        reached_before = r.reached;
        last           = r.st;
        timespec wait{2, 0};
        if (sigtimedwait(&stop_set, nullptr, &wait) > 0) return 0;
    }
}

int run_guest(const guest_options &opts) {
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_set, nullptr);
    signal(SIGPIPE, SIG_IGN);

    // Before joining (a token is used once): gRPC listens with SO_REUSEPORT, so a second guest
    // on this port would share it and the head would reach either at random.
    std::string busy;
    if (!tcp_port_free(opts.listen_host, opts.worker_port, busy)) {
        SF_LOG_ERROR("guest",
                     "the worker port: %s; another guest or server holds it (give this one "
                     "another with --worker-port)",
                     busy.c_str());
        return 1;
    }

    node_credentials creds;
    if (load_node_credentials(opts.state_dir, creds)) {
        SF_LOG_INFO("guest", "joined before as %s: using the node certificate", creds.name.c_str());
    } else {
        if (opts.token.empty()) {
            SF_LOG_ERROR("guest", "not joined yet: --token is required the first time");
            return 1;
        }
        std::string err;
        if (!join_cluster(opts.head, opts.token, opts.name.empty() ? host_name() : opts.name,
                          opts.state_dir, creds, err)) {
            SF_LOG_ERROR("guest", "%s", err.c_str());
            return 1;
        }
        SF_LOG_INFO("guest", "joined %s as %s", opts.head.c_str(), creds.name.c_str());
    }
    std::string model = opts.model_path;
    if (model.empty()) {
        std::string err;
        model = fetch_model_from_head(opts.head, creds, opts.state_dir, err);
        if (model.empty()) {
            SF_LOG_ERROR("guest", "%s", err.c_str());
            return 1;
        }
    }
    const std::string d           = opts.state_dir + "/node";
    std::vector<std::string> argv = opts.worker_argv(model);
    argv.insert(argv.end(), {"--listen", opts.listen_host + ":" + std::to_string(opts.worker_port),
                             "--tls-cert", d + "/node.crt", "--tls-key", d + "/node.key",
                             "--tls-ca", d + "/ca.crt"});
    worker_process worker(argv);
    if (!worker.start()) {
        SF_LOG_ERROR("guest", "cannot start the worker process");
        return 1;
    }
    const int rc = heartbeat(opts, creds, stop_set);
    if (rc == 0) {
        // Stopped (SIGTERM, SIGINT): the head moves our sessions while the worker still runs,
        // then the worker stops. Unreached, the head sees the worker go as it sees a crash.
        register_result r =
            register_node(opts.head, creds, opts.worker_port, opts.advertise, /*leaving=*/true);
        if (r.reached)
            SF_LOG_INFO("guest", "left %s: its sessions moved to other nodes", opts.head.c_str());
        else
            SF_LOG_WARN("guest", "could not tell %s that this node leaves (%s)", opts.head.c_str(),
                        r.message.c_str());
    }
    worker.stop();
    return rc;
}

}  // namespace sf::cluster
