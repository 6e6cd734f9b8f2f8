#include "http/session_ids.h"

#include <cpp-httplib/httplib.h>

#include <charconv>
#include <cstdint>

namespace sf {

void set_session_header(httplib::Response &res, const std::string &session_id) {
    res.set_header(k_session_header, session_id);
}

bool wants_detach(const httplib::Request &req) {
    const std::string v = req.get_header_value(k_detach_header);
    return v == "true" || v == "1";
}

std::string sse_event_id(const std::string &session_id, size_t index) {
    return session_id + ":" + std::to_string(index);
}

bool resume_cursor(const httplib::Request &req, const std::string &session_id, size_t &cursor,
                   std::string &error) {
    cursor            = 0;
    std::string value = req.get_header_value("Last-Event-ID");
    const char *what  = "Last-Event-ID";
    if (value.empty() && req.has_param("after")) {
        value = req.get_param_value("after");
        what  = "after";
    }
    if (value.empty()) return true;
    auto colon = value.rfind(':');
    if (colon != std::string::npos) {
        if (value.substr(0, colon) != session_id) {
            error = std::string(what) + " '" + value + "' names another session";
            return false;
        }
        value = value.substr(colon + 1);
    }
    size_t n     = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    // (n + 1 must not wrap to 0, "from the start": the largest index is out of range.)
    if (ec != std::errc() || p != value.data() + value.size() || n == SIZE_MAX) {
        error = std::string(what) + " must be '<session>:<index>' or an index, got '" + value + "'";
        return false;
    }
    cursor = n + 1;
    return true;
}

bool parse_starting_after(const std::string &value, int64_t &after) {
    // Unsigned: from_chars then takes no sign at all (a signed parse took "-0").
    uint64_t n   = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc() || p != value.data() + value.size() ||
        n > uint64_t(INT64_MAX))
        return false;
    after = int64_t(n);
    return true;
}

}  // namespace sf
