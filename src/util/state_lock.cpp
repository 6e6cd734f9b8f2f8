#include "util/state_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace sf {

state_lock::~state_lock() {
    if (fd_ >= 0) close(fd_);  // releases the flock
}

static std::string read_pid(int fd) {
    char buf[32]    = {};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return pid;
}

int state_lock::holder(const std::string &dir) {
    const std::string path = dir + "/serve.lock";
    int fd                 = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;  // no server ever ran here
    int pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
        flock(fd, LOCK_UN);
    } else {
        const std::string text = read_pid(fd);
        pid                    = text.empty() ? -1 : std::atoi(text.c_str());
        if (pid <= 0) pid = -1;
    }
    close(fd);
    return pid;
}

bool state_lock::acquire(const std::string &dir, std::string &error) {
    const std::string path = dir + "/serve.lock";
    // O_CLOEXEC: the worker child (exec'd) does not keep the lock after its head is gone.
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        error = "cannot open " + path + ": " + std::strerror(errno);
        return false;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err   = errno;
        std::string pid = read_pid(fd);
        close(fd);
        if (err != EWOULDBLOCK) {
            error = "cannot lock " + path + ": " + std::strerror(err);
            return false;
        }
        if (pid.empty()) pid = "unknown";
        error = "another superfluid serve (pid " + pid + ") is using the state directory " + dir +
                "; stop it (`superfluid stop --state-dir " + dir +
                "`), or give this one its own --state-dir";
        return false;
    }
    const std::string me = std::to_string(getpid()) + "\n";
    if (ftruncate(fd, 0) != 0 || pwrite(fd, me.data(), me.size(), 0) < 0) {
        // The lock holds without the PID; only the message of a second server is poorer.
    }
    fd_ = fd;
    return true;
}

}  // namespace sf
