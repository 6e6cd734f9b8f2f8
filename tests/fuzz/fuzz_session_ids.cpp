// libFuzzer target: the re-attach cursors a client sends (http/session_ids.h): Last-Event-ID
// or ?after=N for GET /v1/sessions/{id}/events, ?starting_after=N for a Responses stream.
// Input: "<session id>\n<value>"; the first byte's low bit puts the value in the header or the
// query. Checks: an accepted cursor is one past a real index (never 0 when a value was sent),
// a rejection says why, an accepted starting_after is the value's digits.
#include <cstddef>
#include <cstdint>
#include <string>

#include <cpp-httplib/httplib.h>

#include "fuzz_check.h"
#include "http/session_ids.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const bool in_header = data[0] & 1;
    const std::string rest(reinterpret_cast<const char *>(data) + 1, size - 1);
    const size_t nl           = rest.find('\n');
    const std::string session = nl == std::string::npos ? "s" : rest.substr(0, nl);
    const std::string value   = nl == std::string::npos ? rest : rest.substr(nl + 1);

    httplib::Request req;
    if (in_header) {
        req.headers.emplace("Last-Event-ID", value);
    } else {
        req.params.emplace("after", value);
    }
    size_t cursor = 0;
    std::string error;
    // httplib hands a header's value over as a C string: the server sees it up to a NUL.
    const std::string seen = in_header ? value.substr(0, value.find('\0')) : value;
    if (sf::resume_cursor(req, session, cursor, error)) {
        sf::fuzz::require(seen.empty() || cursor > 0, "a sent index resumes after it");
    } else {
        sf::fuzz::require(!error.empty(), "a rejected cursor says why");
        sf::fuzz::check_rejection(sf::bad_request(error, in_header ? "Last-Event-ID" : "after"));
    }

    int64_t after = -1;
    if (sf::parse_starting_after(value, after)) {
        sf::fuzz::require(after >= 0, "starting_after is non-negative");
        sf::fuzz::require(value.find_first_not_of("0123456789") == std::string::npos,
                          "starting_after is digits only");
    }
    return 0;
}
