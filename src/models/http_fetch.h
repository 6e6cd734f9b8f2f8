// HTTP GET over libcurl for the hub client and the downloader: redirects followed (the hub
// sends file bodies from a CDN), bearer token, connect and stall timeouts, Range requests.
// One curl easy handle per call; safe to use from several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace sf::models {

struct http_config {
    std::string token;            // sent as "Authorization: Bearer <token>" when not empty
    long connect_timeout_s = 10;  // TCP/TLS connect; the default-model probe uses a short one
    long stall_timeout_s   = 30;  // abort when no byte arrives for this long (then resumed)
};

struct http_result {
    long status = 0;                             // final HTTP status; 0 when none arrived
    std::map<std::string, std::string> headers;  // final response's headers, names lowercased
    std::string body;                            // whole body (get) or error body (get_range)
    std::string error;                           // transport error text; "" when a response came
    bool aborted = false;                        // the caller's keep_going() said stop
    bool partial = false;                        // connection ended before the announced length
};

class http_fetch {
  public:
    explicit http_fetch(http_config cfg);

    /** GETs `url` into memory (API JSON). */
    http_result get(const std::string &url) const;

    /**
     * GETs `url` from byte `offset` (Range: bytes=offset-; none when 0). Body bytes of a 2xx
     * response go to `sink(status, data, len)` (false = abort); other bodies land in
     * result.body. `keep_going` is polled about once a second and per chunk.
     */
    http_result get_range(const std::string &url, uint64_t offset,
                          const std::function<bool(long, const char *, size_t)> &sink,
                          const std::function<bool()> &keep_going) const;

    /** Percent-encodes one URL path segment (curl_easy_escape). */
    static std::string escape(const std::string &s);

  private:
    http_config cfg_;
};

}  // namespace sf::models
