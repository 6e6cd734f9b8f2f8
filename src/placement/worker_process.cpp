#include "placement/worker_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "util/log.h"

namespace sf {

worker_process::worker_process(std::vector<std::string> argv) : argv_(std::move(argv)) {}

worker_process::~worker_process() {
    stop();
}

pid_t worker_process::spawn() {
    std::vector<char *> args;
    for (auto &a : argv_) args.push_back(a.data());
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        // The head blocks its stop signals (one thread sigwaits them); the worker must not
        // inherit that mask through exec, or it could not be stopped.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    if (pid > 0) {
        starts_++;
        SF_LOG_INFO("head", "worker started, pid %d", pid);
    }
    return pid;
}

bool worker_process::start() {
    pid_t pid = spawn();
    if (pid < 0) return false;
    pid_.store(pid);
    thread_ = std::thread([this] { supervise(); });
    return true;
}

void worker_process::supervise() {
    auto backoff    = std::chrono::milliseconds(100);
    auto started_at = std::chrono::steady_clock::now();
    while (!stopping_.load()) {
        int status = 0;
        pid_t pid  = pid_.load();
        pid_t r    = waitpid(pid, &status, 0);
        if (r < 0 && errno == EINTR) continue;
        pid_.store(-1);
        if (stopping_.load()) break;
        if (WIFSIGNALED(status)) {
            SF_LOG_WARN("head", "worker %d killed by signal %d", pid, WTERMSIG(status));
        } else {
            SF_LOG_WARN("head", "worker %d exited with status %d", pid, WEXITSTATUS(status));
        }
        if (std::chrono::steady_clock::now() - started_at > std::chrono::seconds(30)) {
            backoff = std::chrono::milliseconds(100);
        }
        {
            std::unique_lock lk(mu_);
            if (cv_.wait_for(lk, backoff, [&] { return stopping_.load(); })) break;
        }
        backoff    = std::min(backoff * 2, std::chrono::milliseconds(10000));
        started_at = std::chrono::steady_clock::now();
        pid_t np   = spawn();
        if (np < 0) {
            SF_LOG_ERROR("head", "cannot restart the worker");
            break;
        }
        pid_.store(np);
    }
}

void worker_process::stop() {
    if (stopping_.exchange(true)) {
        if (thread_.joinable()) thread_.join();
        return;
    }
    cv_.notify_all();
    // Only the supervisor thread reaps the child; here we signal and wait for it to do so.
    pid_t pid = pid_.load();
    if (pid > 0) {
        kill(pid, SIGTERM);
        for (int i = 0; i < 50 && pid_.load() > 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (pid_.load() > 0) kill(pid, SIGKILL);
    }
    if (thread_.joinable()) thread_.join();
}

}  // namespace sf
