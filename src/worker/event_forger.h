// Test only (issue #37: "a guest cannot write into sessions it does not hold"): a worker started
// with SUPERFLUID_TEST_FORGE_EVENTS=1 in its environment misbehaves on purpose. It remembers the
// last token it sent for each session, and when the head opens a new Events call (after a lost
// link, when the head has moved those sessions elsewhere), it first sends, for each of them, the
// next three tokens with the text "FORGED" and a finish under each of the 64 epochs after the
// one it had: epochs come from one counter of the head, so a guest guessing would try those.
// The head must refuse them (an epoch it never gave the session, or the current one on another
// stream than the one the placement was accepted on). Never set outside tests; the worker logs a
// warning when it is. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "worker/event_outbox.h"

namespace sf {

class event_forger {
  public:
    /** True when SUPERFLUID_TEST_FORGE_EVENTS is set (read once, warned once). */
    static bool enabled();
    /** The stream's thread, after writing `sent`: remembers each session's last token. */
    void saw(const std::vector<outbox_event> &sent);
    /** A new Events call: the forged events for every remembered session, which it forgets. */
    std::vector<outbox_event> forge();

  private:
    std::mutex mu_;
    std::map<std::string, outbox_event> last_;
};

}  // namespace sf
