// The session registry: session ids, the sessions running in this process, and sessions read
// back from the journal by id (a client re-attaching after its stream broke or the head
// restarted). Thread-safe (one leaf mutex).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "journal/journal_writer.h"
#include "session/session.h"
#include "session/worker_client.h"

namespace sf {

class session_registry {
  public:
    /** `journal` and `worker` must outlive the registry. */
    session_registry(journal::writer &journal, worker_client &worker)
        : journal_(journal), worker_(worker) {}

    /**
     * A new session id: "sess_" + 32 hex digits, 128 bits from OpenSSL's CSPRNG (RAND_bytes;
     * throws std::runtime_error when it fails). Any thread.
     */
    std::string new_id();
    /** Tracks a running session (until remove). */
    void add(const std::shared_ptr<session> &s);
    void remove(const std::string &id);
    /** The running sessions, for shutdown and /api/ps. */
    std::vector<std::shared_ptr<session>> running();

    /**
     * A session by id: a running one, else a finished one read back from the journal; nullptr
     * when unknown. `interrupted`: journaled as unfinished but not running here (its journal
     * write failed; it resumes on the next start).
     */
    std::shared_ptr<session> find(const std::string &id, bool *interrupted = nullptr);

    /**
     * A session as the journal holds it: its tokens, API, client meta and chat parse spec;
     * `sub` gets its journaled submission. nullptr when the journaled request cannot be read.
     */
    std::shared_ptr<session> restore(const journal::stored_session &stored, worker_submission &sub);

  private:
    std::shared_ptr<session> running_session(const std::string &id);

    journal::writer &journal_;
    worker_client &worker_;
    std::mutex mu_;
    std::map<std::string, std::weak_ptr<session>> live_;
};

}  // namespace sf
