#include "http/router.h"

#include <algorithm>
#include <iterator>

namespace sf {

http_router &http_router::add(std::string method, const std::string &pattern, handler h,
                              reader_handler r) {
    routes_.push_back(route{std::move(method), std::regex(pattern), std::move(h), std::move(r)});
    return *this;
}

http_router &http_router::Get(const std::string &pattern, handler h) {
    return add("GET", pattern, std::move(h), nullptr);
}
http_router &http_router::Post(const std::string &pattern, handler h) {
    return add("POST", pattern, std::move(h), nullptr);
}
http_router &http_router::Post(const std::string &pattern, reader_handler h) {
    return add("POST", pattern, nullptr, std::move(h));
}
http_router &http_router::Delete(const std::string &pattern, handler h) {
    return add("DELETE", pattern, std::move(h), nullptr);
}
http_router &http_router::Options(const std::string &pattern, handler h) {
    return add("OPTIONS", pattern, std::move(h), nullptr);
}

void http_router::dispatch(httplib::Request &req, httplib::Response &res) const {
    static const char *const known[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"};
    if (std::find(std::begin(known), std::end(known), req.method) == std::end(known)) {
        res.status = 501;  // a method no route of this server has (RFC 9110 15.6.2)
        return;
    }
    const std::string method = req.method == "HEAD" ? std::string("GET") : req.method;
    std::string allowed;  // the methods the path has, when not this one
    for (const auto &r : routes_) {
        if (!std::regex_match(req.path, req.matches, r.pattern)) continue;
        if (r.method != method) {
            // OPTIONS is every path's (the CORS preflight route): it makes no path exist.
            if (r.method != "OPTIONS" && allowed.find(r.method) == std::string::npos)
                allowed += (allowed.empty() ? "" : ", ") + r.method;
            continue;
        }
        if (r.plain) {
            r.plain(req, res);
        } else {
            // The body was read before routing (event_server): the reader hands it over whole.
            httplib::ContentReader reader(
                [&req](httplib::ContentReceiver receive) {
                    return req.body.empty() || receive(req.body.data(), req.body.size());
                },
                [](httplib::FormDataHeader, httplib::ContentReceiver) { return false; });
            r.with_reader(req, res, reader);
        }
        if (res.status == -1) res.status = 200;
        return;
    }
    if (allowed.empty()) {
        res.status = 404;
        return;
    }
    res.status = 405;  // the path exists with other methods (RFC 9110 15.5.6: Allow lists them)
    res.set_header("Allow", allowed);
}

void http_router::handle(httplib::Request &req, httplib::Response &res) const {
    try {
        if (!pre_ || pre_(req, res) != outcome::HANDLED) dispatch(req, res);
    } catch (...) {
        res        = httplib::Response{};
        res.status = 500;
        if (exception_) exception_(req, res, std::current_exception());
    }
    if (res.status == -1) res.status = 200;
    if (res.status >= 400) fill_error(req, res);
    if (post_) post_(req, res);
}

void http_router::refuse(const httplib::Request &req, httplib::Response &res) const {
    res.status = 503;
    if (overload_) overload_(req, res);
    fill_error(req, res);
    if (post_) post_(req, res);
}

void http_router::fill_error(const httplib::Request &req, httplib::Response &res) const {
    if (error_ && res.body.empty() && !res.content_provider_) error_(req, res);
}

}  // namespace sf
