// `superfluid join HEAD:PORT`: a guest node (issue #17). Joins with the token once (or finds
// its certificate in STATE/node from an earlier join), runs its worker as a supervised child
// (placement/worker_process.h) serving the worker protocol on TCP with mutual TLS, and
// registers it with the head every 2 s. Without --model it first fetches the head's model file
// (model_transfer.h) and serves that; (the heartbeat; after a head restart the guest is back
// within one period). A head that refuses the node (another tokenizer) ends the guest with
// the head's reason.
// Threads: run_guest runs on the calling thread until SIGINT/SIGTERM.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sf::cluster {

struct guest_options {
    std::string head;       // host:port of the head's guest port
    std::string token;      // sf1.… (only needed for the first join)
    std::string state_dir;  // STATE; credentials in STATE/node
    std::string name;       // the node name asked for (default: the host name)
    int worker_port         = 8455;
    std::string listen_host = "0.0.0.0";  // the worker's bind address
    std::string advertise;                // host the head should dial ("" : as it sees us)
    // The model file; "" : the head's, fetched over the guest port (model_transfer.h).
    std::string model_path;
    // The worker's command line for a model file, without --listen/--tls-* (argv[0] =
    // executable, `worker`, --model …): run_guest appends those.
    std::function<std::vector<std::string>(const std::string &model_path)> worker_argv;
};

/** Runs the guest; returns the exit code (0 on a signal, 1 on errors, 3 when refused). */
int run_guest(const guest_options &opts);

}  // namespace sf::cluster
