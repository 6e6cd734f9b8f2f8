// The worker supervisor's hot standby against real child processes: a shell script stands in
// for `superfluid worker` (it sleeps; as a standby, given `--standby-fd 3`, it "loads" for a
// while, then says 'r' on fd 3 as the real standby does). `busy` is the test's switch for "the
// worker has sessions". What is checked: a standby is not spawned while the worker is busy, a
// loading standby is stopped (process state T) while the worker is busy and loads on when it is
// idle, a stopped standby still exits when the supervisor stops, and no child outlives a head
// that is SIGKILLed.
#include "placement/worker_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

using namespace std::chrono_literals;

namespace {

// The state letter of /proc/<pid>/stat (R, S, T, Z, …); '?' when the process is gone.
char proc_state(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line)) return '?';
    const auto close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

template <class F>
bool eventually(F f, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (f()) return true;
        std::this_thread::sleep_for(20ms);
    }
    return f();
}

// `sh -c SCRIPT` as the worker; the standby gets "--standby-fd 3" appended ($0 and $1 of the
// script). The standby "loads" for `load_steps` × 0.1 s of its own running time (a loop of short
// sleeps: time spent stopped does not count), then says 'r'.
std::vector<std::string> fake_worker(int load_steps) {
    const std::string script =
        "if [ \"$1\" = 3 ]; then i=0; while [ $i -lt " + std::to_string(load_steps) +
        " ]; do sleep 0.1; i=$((i+1)); done; printf r >&3; fi; exec sleep 300";
    return {"/bin/sh", "-c", script};
}

TEST(WorkerProcess, NoStandbyIsSpawnedWhileTheWorkerIsBusy) {
    std::atomic<bool> busy{true};
    sf::worker_process p(
        fake_worker(1), sf::standby_mode::on, [] { return true; }, [&] { return busy.load(); });
    ASSERT_TRUE(p.start());
    std::this_thread::sleep_for(3500ms);  // past the 2 s delay before a standby
    EXPECT_EQ(p.standby_pid(), -1);
    busy = false;
    ASSERT_TRUE(eventually([&] { return p.standby_pid() > 0; }, 2s));
    EXPECT_TRUE(eventually([&] { return p.standby_ready(); }, 5s));
    p.stop();
}

// A supervisor whose standby loads for `load_steps` × 0.1 s, and the test's "busy" switch.
struct supervised {
    std::atomic<bool> busy{false};
    sf::worker_process p;
    explicit supervised(int load_steps)
        : p(
              fake_worker(load_steps), sf::standby_mode::on, [] { return true; },
              [this] { return busy.load(); }) {}
    // Starts, waits for the standby to be spawned, then turns busy while it loads: returns the
    // standby's pid once it is stopped (-1 if any step did not happen).
    pid_t stopped_loading_standby() {
        if (!p.start() || !eventually([&] { return p.standby_pid() > 0; }, 5s)) return -1;
        const pid_t standby = p.standby_pid();
        busy                = true;
        return eventually([&] { return proc_state(standby) == 'T'; }, 2s) ? standby : -1;
    }
};

TEST(WorkerProcess, ALoadingStandbyIsStoppedWhileTheWorkerIsBusyAndLoadsWhenIdle) {
    supervised s(20);  // 2 s of loading
    const pid_t standby = s.stopped_loading_standby();
    ASSERT_GT(standby, 0);
    EXPECT_EQ(s.p.standby_pauses(), 1);
    std::this_thread::sleep_for(3s);  // longer than its load: stopped, it did not finish
    EXPECT_EQ(proc_state(standby), 'T');
    EXPECT_FALSE(s.p.standby_ready());
    s.busy = false;
    EXPECT_TRUE(eventually([&] { return proc_state(standby) != 'T'; }, 2s));
    EXPECT_TRUE(eventually([&] { return s.p.standby_ready(); }, 5s));
    // Loaded, it is never stopped again, busy or not.
    s.busy = true;
    std::this_thread::sleep_for(600ms);
    EXPECT_NE(proc_state(standby), 'T');
    EXPECT_EQ(s.p.standby_pauses(), 1);
    s.p.stop();
    EXPECT_EQ(proc_state(standby), '?');
}

TEST(WorkerProcess, AStoppedStandbyExitsWhenTheSupervisorStops) {
    supervised s(50);
    const pid_t standby = s.stopped_loading_standby();
    ASSERT_GT(standby, 0);
    const auto t0 = std::chrono::steady_clock::now();
    s.p.stop();
    EXPECT_EQ(proc_state(standby), '?');
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);  // SIGTERM acted, no 5 s SIGKILL wait
}

// The head SIGKILLed while its standby is stopped mid-load: neither the worker nor the standby
// is left behind (a stopped orphan would hold a SIGTERM pending forever, and the pipes it
// inherited would keep whoever reads the head's output waiting). The scripts never call prctl:
// the parent-death signal must come from the supervisor's fork.
TEST(WorkerProcess, NoChildOutlivesAHeadThatIsKilled) {
    int pids[2];
    ASSERT_EQ(pipe(pids), 0);
    const pid_t head = fork();
    ASSERT_GE(head, 0);
    if (head == 0) {
        close(pids[0]);
        supervised s(50);
        const pid_t got[2] = {s.stopped_loading_standby(), s.p.pid()};
        (void)!write(pids[1], got, sizeof got);
        pause();
        _exit(0);
    }
    close(pids[1]);
    pid_t got[2]        = {-1, -1};
    const bool read_all = read(pids[0], got, sizeof got) == sizeof got;
    close(pids[0]);
    kill(head, SIGKILL);
    waitpid(head, nullptr, 0);
    ASSERT_TRUE(read_all);
    ASSERT_GT(got[0], 0) << "the standby was not stopped while loading";
    ASSERT_GT(got[1], 0);
    for (pid_t child : got) {
        const bool gone = eventually(
            [&] {
                const char st = proc_state(child);
                return st == '?' || st == 'Z';
            },
            3s);
        EXPECT_TRUE(gone) << "pid " << child << " outlived the head, state " << proc_state(child);
        if (!gone) kill(child, SIGKILL);
    }
}

}  // namespace
