#include "models/http_fetch.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace sf::models {

namespace {

std::once_flag g_curl_init;

struct transfer {
    const std::function<bool(long, const char *, size_t)> *sink = nullptr;
    const std::function<bool()> *keep_going                     = nullptr;
    CURL *curl                                                  = nullptr;
    http_result *res                                            = nullptr;
    bool sink_refused                                           = false;
};

size_t on_header(char *data, size_t size, size_t n, void *user) {
    auto *t = static_cast<transfer *>(user);
    std::string line(data, size * n);
    if (line.rfind("HTTP/", 0) == 0) {
        t->res->headers.clear();  // a new response (after a redirect): keep only the last
    } else if (auto colon = line.find(':'); colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (auto &c : name) c = char(tolower(static_cast<unsigned char>(c)));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
        while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
        t->res->headers[name] = value;
    }
    return size * n;
}

size_t on_body(char *data, size_t size, size_t n, void *user) {
    auto *t     = static_cast<transfer *>(user);
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (t->sink && status >= 200 && status < 300) {
        if (!(*t->sink)(status, data, size * n)) {
            t->sink_refused = true;
            return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
        }
    } else if (t->res->body.size() < (8u << 20)) {
        t->res->body.append(data, size * n);
    }
    return size * n;
}

int on_progress(void *user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto *t = static_cast<transfer *>(user);
    return (t->keep_going && *t->keep_going && !(*t->keep_going)()) ? 1 : 0;
}

}  // namespace

http_fetch::http_fetch(http_config cfg) : cfg_(std::move(cfg)) {
    std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string http_fetch::escape(const std::string &s) {
    std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    char *e         = curl_easy_escape(nullptr, s.c_str(), int(s.size()));
    std::string out = e ? e : "";
    curl_free(e);
    return out;
}

http_result http_fetch::get(const std::string &url) const {
    return get_range(url, 0, {}, {});
}

http_result http_fetch::get_range(const std::string &url, uint64_t offset,
                                  const std::function<bool(long, const char *, size_t)> &sink,
                                  const std::function<bool()> &keep_going) const {
    http_result res;
    std::unique_ptr<CURL, void (*)(CURL *)> curl(curl_easy_init(), curl_easy_cleanup);
    if (!curl) {
        res.error = "curl_easy_init failed";
        return res;
    }
    transfer t;
    t.sink       = sink ? &sink : nullptr;
    t.keep_going = keep_going ? &keep_going : nullptr;
    t.curl       = curl.get();
    t.res        = &res;

    curl_slist *headers = nullptr;
    if (!cfg_.token.empty())
        headers = curl_slist_append(headers, ("Authorization: Bearer " + cfg_.token).c_str());
    std::unique_ptr<curl_slist, void (*)(curl_slist *)> hold(headers, curl_slist_free_all);
    std::string range = offset > 0 ? std::to_string(offset) + "-" : "";

    CURL *c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    // libcurl ≥ 7.58 does not forward a custom Authorization header to another host on a
    // redirect (the hub redirects file bodies to its CDN), so the token stays with the hub.
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "superfluid/0.1.0");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, cfg_.connect_timeout_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, cfg_.stall_timeout_s);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (!range.empty()) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);

    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res.status);
    if (rc == CURLE_ABORTED_BY_CALLBACK || t.sink_refused) {
        res.aborted = true;
        res.error   = "aborted";
    } else if (rc == CURLE_PARTIAL_FILE) {
        res.partial = true;
        res.error   = curl_easy_strerror(rc);
    } else if (rc != CURLE_OK) {
        res.error = curl_easy_strerror(rc);
    }
    return res;
}

}  // namespace sf::models
