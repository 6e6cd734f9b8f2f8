#include "cli/stop_command.h"

#include <signal.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "util/paths.h"
#include "util/state_lock.h"

namespace sf {

void add_stop_options(CLI::App &cmd, stop_options &o) {
    cmd.add_option("--state-dir", o.state_dir,
                   "State directory of the server to stop (default: $XDG_STATE_HOME/superfluid)");
    cmd.add_option("--timeout", o.timeout_s, "Seconds to wait for it to exit")
        ->capture_default_str()
        ->check(CLI::Range(1, 3600));
}

int run_stop(const stop_options &o) {
    const std::string dir = o.state_dir.empty() ? paths::default_state_dir() : o.state_dir;
    const int pid         = state_lock::holder(dir);
    if (pid == 0) {
        fprintf(stderr, "superfluid stop: no server runs on the state directory %s\n", dir.c_str());
        return 1;
    }
    if (pid < 0) {
        fprintf(stderr,
                "superfluid stop: a server holds %s/serve.lock but its pid cannot be read\n",
                dir.c_str());
        return 1;
    }
    if (kill(pid, SIGTERM) != 0) {
        fprintf(stderr, "superfluid stop: cannot signal the server (pid %d): %s\n", pid,
                std::strerror(errno));
        return 1;
    }
    fprintf(stderr, "superfluid stop: stopping the server (pid %d, state directory %s)\n", pid,
            dir.c_str());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        if (state_lock::holder(dir) == 0) {
            fprintf(stderr, "superfluid stop: stopped\n");
            return 0;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    fprintf(stderr,
            "superfluid stop: the server (pid %d) still runs after %d s; kill -9 %d ends it\n", pid,
            o.timeout_s, pid);
    return 1;
}

}  // namespace sf
