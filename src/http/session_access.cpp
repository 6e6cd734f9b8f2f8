#include "http/session_access.h"

#include <cpp-httplib/httplib.h>

#include "api/common/client_identity.h"
#include "http/route_util.h"

namespace sf {

session_access::session_access(bool keyed, const std::vector<std::string> &admin_keys,
                               std::string identity_secret)
    : keyed_(keyed), admin_(admin_keys), secret_(std::move(identity_secret)) {}

session_access::caller session_access::of(const httplib::Request &req) const {
    caller c;
    c.admin    = !admin_.empty() && admin_.contains(request_key(req));
    c.identity = client_identity(priority_headers_of(req),
                                 req.remote_addr + ":" + std::to_string(req.remote_port), secret_);
    return c;
}

bool session_access::may_use(const caller &c, const std::string &owner) const {
    if (!keyed_) return true;  // the id is the capability
    return c.admin || (owner.rfind("key:", 0) == 0 && owner == c.identity);
}

bool session_access::may_list(const caller &c, const std::string &owner) const {
    return keyed_ && (c.admin || (owner.rfind("key:", 0) == 0 && owner == c.identity));
}

}  // namespace sf
