// Retry-resume (issue #36): a client that knows nothing of Superfluid's sessions (Claude Code,
// the OpenAI and Anthropic SDKs) loses its stream when the head restarts, and sends the same
// request again. The sessions the journal brought back at the restart are offered here under
// their retry key; the same request from the same client, within the window, takes its
// session (once) and reads it from token 0: the journaled tokens at once, then the
// continuation. Nothing is generated twice: a session that completed (stop or length) after
// the restart, before the retry came, is given whole; one that failed or was cancelled is not
// offered any more, and the retry starts afresh.
//
// "The same request": the same API and model name, the same request as parsed (JSON
// whitespace and key order do not matter, any value does; volatile billing lines are
// normalized as for the prefix cache), the same client identity (API key, else User-Agent:
// api/common/priority.h client_identity), and no seed the server chose.
//
// Threads: every method is thread-safe (one leaf mutex).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/generate_request.h"
#include "session/session.h"

namespace sf {

class retry_index {
  public:
    /** Offers expire `window` after they are made (the head restart). */
    explicit retry_index(std::chrono::seconds window = std::chrono::minutes(10))
        : window_(window) {}

    /**
     * The retry key of submission `sub` (volatile lines already normalized) as the client sent
     * it: SHA-256, hex, over the API, the model name and the encoded request with the session
     * id, epoch, resume tokens and retry key left out, and the seed when the client gave none
     * (`client_seeded` false: the server picks a fresh one per request).
     */
    static std::string key(const worker_submission &sub, bool client_seeded);

    /** Session `s`, resumed after a restart, may be taken by a retry of key `key`. */
    void offer(const std::string &key, const std::shared_ptr<session> &s);
    /**
     * A session offered under `key` within the window that is running or ended by its model
     * (stop, length), removed from the offers; nullptr when none (the request starts anew).
     */
    std::shared_ptr<session> take(const std::string &key);

  private:
    struct offer_t {
        std::shared_ptr<session> s;  // kept while offered: it may finish before the retry
        std::chrono::steady_clock::time_point until;
    };
    const std::chrono::seconds window_;
    std::mutex mu_;
    std::multimap<std::string, offer_t> offers_;
};

}  // namespace sf
