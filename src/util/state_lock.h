// One server per state directory: `serve` holds an exclusive flock(2) on STATE/serve.lock for
// its whole life, so two heads never share one journal. The OS releases the lock when the
// process dies (kill -9 included), so a crashed head restarts cleanly. The file holds the
// holder's PID, for the message a second server prints. Owned by the serve thread.
#pragma once

#include <string>

namespace sf {

class state_lock {
  public:
    state_lock() = default;
    ~state_lock();
    state_lock(const state_lock &)            = delete;
    state_lock &operator=(const state_lock &) = delete;

    /**
     * Takes the lock of `dir` (which must exist). False with `error` when another process
     * holds it ("… (pid N) …") or the lock file cannot be opened.
     */
    bool acquire(const std::string &dir, std::string &error);

    /**
     * The PID of the server holding `dir`'s lock (`superfluid stop`): 0 when none holds it, -1
     * when one does but its PID cannot be read. Takes a shared lock for an instant to find out.
     */
    static int holder(const std::string &dir);

  private:
    int fd_ = -1;
};

}  // namespace sf
