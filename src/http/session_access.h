// Who may see and use which session (issue #38 item 2). A session id (128 random bits) is the
// capability to read, replay and cancel a session; listings (/api/ps, /ui/events, superfluid ps)
// must not hand it out:
//   * without keys (no --api-key, no --admin-key) anyone who reaches the server may use a session
//     whose id they hold, and listings show no ids at all: a caller without a key cannot prove it
//     made a session (a User-Agent is anyone's to send);
//   * with keys, using a session needs its id and the key that made it, or an admin key
//     (--admin-key); a listing shows a session's id to the caller whose key made it and to
//     admin key holders.
// Every row keeps a reference that grants nothing (session_ref in api/superfluid/status_view.h:
// a hash of the id, which whoever holds the id can compute to find its own session). Immutable
// after construction: any thread.
#pragma once

#include <string>
#include <vector>

#include "http/key_check.h"

namespace httplib {
struct Request;
}

namespace sf {

class session_access {
  public:
    session_access() = default;
    /**
     * `keyed`: the server asks a key of every API route (--api-key or --admin-key given);
     * `admin_keys`: keys whose holders see and use every session; `identity_secret`: what
     * client ids are keyed with (api/common/client_identity.h).
     */
    session_access(bool keyed, const std::vector<std::string> &admin_keys,
                   std::string identity_secret);

    /** The caller of a request: an admin, or who it is (its client id). */
    struct caller {
        bool admin = false;
        std::string identity;
    };
    caller of(const httplib::Request &req) const;

    /** Keys are in use. */
    bool keyed() const { return keyed_; }
    /** `c` may read, replay or cancel a session made by `owner` (session::client), its id in hand.
     */
    bool may_use(const caller &c, const std::string &owner) const;
    /** A listing may show `c` the id of a session made by `owner`. */
    bool may_list(const caller &c, const std::string &owner) const;

  private:
    bool keyed_ = false;
    key_set admin_;
    std::string secret_;
};

}  // namespace sf
