#include "placement/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "core/worker_report.h"
#include "util/log.h"
#include "util/proc_memory.h"

namespace sf {

namespace {

using clock_type = std::chrono::steady_clock;

// A new standby waits this long after the worker it backs is ready (first start, restart or
// promotion) so that its model load does not compete with the streams that are resuming on
// it, or with the first requests (on a loaded machine the load alone can outlast the delay).
constexpr auto kStandbyDelay = std::chrono::seconds(2);

std::atomic<bool> g_config_failed{false};

bool exited(pid_t pid, int &status) {
    return pid > 0 && waitpid(pid, &status, WNOHANG) == pid;
}

void log_exit(const char *what, pid_t pid, int status) {
    if (WIFSIGNALED(status))
        SF_LOG_WARN("head", "%s %d killed by signal %d", what, pid, WTERMSIG(status));
    else
        SF_LOG_WARN("head", "%s %d exited with status %d", what, pid, WEXITSTATUS(status));
}

void close_fd(int &fd) {
    if (fd >= 0) close(fd);
    fd = -1;
}

}  // namespace

bool worker_process::config_failed() {
    return g_config_failed.load();
}

bool parse_standby_mode(const std::string &s, standby_mode &out) {
    if (s == "off")
        out = standby_mode::off;
    else if (s == "on")
        out = standby_mode::on;
    else if (s == "auto")
        out = standby_mode::automatic;
    else
        return false;
    return true;
}

worker_process::worker_process(std::vector<std::string> argv, standby_mode standby,
                               std::function<bool()> ready, std::function<bool()> busy)
    : argv_(std::move(argv)), standby_(standby), ready_(std::move(ready)), busy_(std::move(busy)) {
    if (pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
}

worker_process::~worker_process() {
    stop();
    close_fd(wake_[0]);
    close_fd(wake_[1]);
}

worker_process::child worker_process::spawn(bool standby) {
    std::vector<std::string> argv = argv_;
    int go[2]                     = {-1, -1};
    if (standby) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) != 0) return {};
        argv.insert(argv.end(), {"--standby-fd", "3"});
    }
    std::vector<char *> args;
    for (auto &a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    // `exec_sync` closes (close-on-exec) when the child has exec'd or died: spawn returns only
    // then, so the parent-death signal below is in place before the head may stop the child.
    int exec_sync[2] = {-1, -1};
    if (pipe2(exec_sync, O_CLOEXEC) != 0) exec_sync[0] = exec_sync[1] = -1;
    pid_t parent = getpid();
    pid_t pid    = fork();
    if (pid == 0) {
        // The head blocks its stop signals (one thread sigwaits them); the worker must not
        // inherit that mask through exec, or it could not be stopped.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        // The child never outlives the head, even if the head dies before the worker's main()
        // sets this again (it survives exec). A standby gets SIGKILL: a stopped one (see
        // pace_standby) would hold a SIGTERM pending forever.
        prctl(PR_SET_PDEATHSIG, standby ? SIGKILL : SIGTERM);
        if (getppid() != parent) _exit(127);
        if (standby) {
            if (go[0] == 3)
                fcntl(3, F_SETFD, 0);  // dup2 onto itself keeps close-on-exec
            else
                dup2(go[0], 3);
        }
        execv(args[0], args.data());
        _exit(127);
    }
    child c;
    close_fd(go[0]);
    close_fd(exec_sync[1]);
    if (exec_sync[0] >= 0) {
        char b;
        while (pid > 0 && read(exec_sync[0], &b, 1) < 0 && errno == EINTR) {
        }
        close_fd(exec_sync[0]);
    }
    if (pid < 0) {
        close_fd(go[1]);
        return c;
    }
    c.pid   = pid;
    c.go_fd = go[1];
    c.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (standby) {
        SF_LOG_INFO("head", "standby worker spawned, pid %d", pid);
    } else {
        starts_++;
        SF_LOG_INFO("head", "worker started, pid %d", pid);
    }
    return c;
}

bool worker_process::start() {
    if (wake_[0] < 0) return false;
    child first = spawn(false);
    if (first.pid < 0) return false;
    close_fd(first.pidfd);  // the supervising thread opens its own
    pid_.store(first.pid);
    thread_ = std::thread([this] { supervise(); });
    return true;
}

// Sleeps until a child exits, stop() wakes us, or `timeout_ms` passes.
void worker_process::wait_events(const child &a, const child &b, int timeout_ms) {
    pollfd fds[4];
    nfds_t n      = 0;
    fds[n++]      = {wake_[0], POLLIN, 0};
    bool poll_all = true;
    for (const child *c : {&a, &b}) {
        if (c->pid <= 0) continue;
        if (c->pidfd >= 0)
            fds[n++] = {c->pidfd, POLLIN, 0};
        else
            poll_all = false;  // no pidfd: notice its exit on a short timer
    }
    // A standby says "loaded" with one byte on its socket.
    if (b.pid > 0 && b.go_fd >= 0 && !standby_ready_.load()) fds[n++] = {b.go_fd, POLLIN, 0};
    if (!poll_all && (timeout_ms < 0 || timeout_ms > 100)) timeout_ms = 100;
    poll(fds, n, timeout_ms);
}

// `auto`: a standby duplicates the worker's private memory (the mmapped model is shared), so
// one is kept when MemAvailable covers twice that plus 1 GiB for everything else.
bool worker_process::standby_allowed(pid_t worker) {
    if (standby_ == standby_mode::on) return true;
    int64_t avail = mem_available_bytes();
    int64_t anon  = process_private_bytes(worker);
    if (avail < 0 || anon < 0) return false;
    bool ok = avail >= 2 * anon + (int64_t(1) << 30);
    if (!ok)
        SF_LOG_INFO("head",
                    "no standby worker: %lld MiB available, the worker's private memory is "
                    "%lld MiB (--standby auto needs twice that plus 1 GiB)",
                    static_cast<long long>(avail >> 20), static_cast<long long>(anon >> 20));
    return ok;
}

void worker_process::supervise() {
    child active;
    active.pid   = pid_.load();
    active.pidfd = static_cast<int>(syscall(SYS_pidfd_open, active.pid, 0));
    child standby;
    auto backoff         = std::chrono::milliseconds(100);
    auto standby_backoff = std::chrono::seconds(5);
    auto started_at      = clock_type::now();
    auto restart_at      = clock_type::time_point::max();
    auto standby_at      = clock_type::now() + kStandbyDelay;
    bool standby_checked = false;  // `auto` decided for the worker now running
    bool ready_seen      = false;  // the worker now running was seen ready (standby_at moved)
    while (!stopping_.load()) {
        // Wake for a restart that is due, every 250 ms while a standby is to be spawned, every
        // 100 ms while one loads (to stop it soon after sessions arrive).
        auto now  = clock_type::now();
        auto next = restart_at;
        if (standby_ != standby_mode::off && standby.pid < 0 && active.pid > 0 && !standby_checked)
            next = std::min(next, std::max(standby_at, now + std::chrono::milliseconds(250)));
        if (busy_ && standby.pid > 0 && !standby_ready_.load())
            next = std::min(next, now + std::chrono::milliseconds(100));
        int timeout = -1;
        if (next != clock_type::time_point::max())
            timeout =
                1 + static_cast<int>(
                        std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count());
        wait_events(active, standby, timeout);
        if (stopping_.load()) break;
        now        = clock_type::now();
        int status = 0;
        if (standby.pid > 0 && !standby_ready_.load()) {
            char b = 0;
            if (recv(standby.go_fd, &b, 1, MSG_DONTWAIT) == 1 && b == 'r') {
                standby_ready_.store(true);
                SF_LOG_INFO("head", "standby worker %d loaded", standby.pid);
            }
        }
        if (exited(active.pid, status)) {
            log_exit("worker", active.pid, status);
            close_fd(active.pidfd);
            active = {};
            pid_.store(-1);
            if (now - started_at > std::chrono::seconds(30))
                backoff = std::chrono::milliseconds(100);
            if (WIFEXITED(status) && WEXITSTATUS(status) == k_worker_exit_config) {
                SF_LOG_ERROR("head",
                             "the worker cannot run with these options (its error is above): "
                             "stopping");
                g_config_failed.store(true);
                kill(getpid(), SIGTERM);
                break;
            }
            // Only a loaded standby is promoted: one still loading would not listen (nor answer
            // Health) until it has, and the watchdog would take it for hung; it stays the
            // standby for the next failure while a new worker starts as without one.
            if (standby.pid > 0 && standby.paused && standby_ready_.load() &&
                kill(standby.pid, SIGCONT) == 0)
                standby.paused = false;  // stopped just as it said it had loaded
            if (standby.pid > 0 && standby_ready_.load() && !exited(standby.pid, status) &&
                write(standby.go_fd, "g", 1) == 1) {
                close_fd(standby.go_fd);
                active  = standby;
                standby = {};
                standby_pid_.store(-1);
                standby_ready_.store(false);
                pid_.store(active.pid);
                starts_++;
                promotions_++;
                started_at      = now;
                standby_at      = now + kStandbyDelay;
                standby_checked = false;
                ready_seen      = false;
                SF_LOG_INFO("head", "worker started, pid %d (the standby, promoted)", active.pid);
            } else {
                restart_at = now + backoff;
                backoff    = std::min(backoff * 2, std::chrono::milliseconds(10000));
            }
        }
        if (standby.pid > 0 && exited(standby.pid, status)) {
            log_exit("standby worker", standby.pid, status);
            close_fd(standby.pidfd);
            close_fd(standby.go_fd);
            standby = {};
            standby_pid_.store(-1);
            standby_ready_.store(false);
            standby_at      = now + standby_backoff;
            standby_backoff = std::min(standby_backoff * 2, std::chrono::seconds(60));
        }
        // A loading standby runs only while the worker is idle; a loaded one is never stopped,
        // and a worker that died (active.pid < 0 now) leaves it to load at once.
        if (standby.pid > 0)
            pace_standby(standby, busy_ && !standby_ready_.load() && active.pid > 0 && busy_());
        if (active.pid < 0 && now >= restart_at) {
            restart_at = clock_type::time_point::max();
            started_at = now;
            active     = spawn(false);
            if (active.pid < 0) {
                SF_LOG_ERROR("head", "cannot restart the worker");
                break;
            }
            pid_.store(active.pid);
            standby_at      = std::max(standby_at, now + kStandbyDelay);
            standby_checked = false;
            ready_seen      = false;
        }
        if (!ready_seen && active.pid > 0 && (!ready_ || ready_())) {
            ready_seen = true;
            standby_at = std::max(standby_at, now + kStandbyDelay);
        }
        if (standby_ != standby_mode::off && standby.pid < 0 && active.pid > 0 &&
            now >= standby_at && !standby_checked && (!ready_ || ready_()) &&
            (!busy_ || !busy_())) {
            standby_checked = true;
            if (standby_allowed(active.pid)) {
                standby = spawn(true);
                standby_pid_.store(standby.pid);
                if (standby.pid > 0) standby_checked = false;
            }
        }
    }
    stop_children(active, standby);
    pid_.store(-1);
    standby_pid_.store(-1);
    standby_ready_.store(false);
}

// Stops (SIGSTOP) a loading standby while the worker is busy, continues it otherwise.
void worker_process::pace_standby(child &standby, bool worker_busy) {
    if (worker_busy == standby.paused) return;
    if (kill(standby.pid, worker_busy ? SIGSTOP : SIGCONT) != 0) return;
    standby.paused = worker_busy;
    if (worker_busy) standby_pauses_++;
    SF_LOG_INFO("head", "standby worker %d %s", standby.pid,
                worker_busy ? "paused while the worker has sessions"
                            : "loading again (the worker is idle or gone)");
}

// SIGTERM both, up to 5 s for them to exit, then SIGKILL; reaps them.
void worker_process::stop_children(child &a, child &b) {
    for (child *c : {&a, &b}) {
        if (c->pid > 0 && c->paused) kill(c->pid, SIGCONT);  // to act on the SIGTERM
        if (c->pid > 0) kill(c->pid, SIGTERM);
    }
    for (int i = 0; i < 100; ++i) {
        bool alive = false;
        for (child *c : {&a, &b}) {
            int status = 0;
            if (c->pid > 0 && exited(c->pid, status)) c->pid = -1;
            alive = alive || c->pid > 0;
        }
        if (!alive) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (child *c : {&a, &b}) {
        if (c->pid > 0) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, nullptr, 0);
        }
        close_fd(c->pidfd);
        close_fd(c->go_fd);
        c->pid = -1;
    }
}

void worker_process::stop() {
    stopping_.store(true);
    if (wake_[1] >= 0) (void)!write(wake_[1], "x", 1);
    if (thread_.joinable()) thread_.join();
}

}  // namespace sf
