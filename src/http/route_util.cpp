#include "http/route_util.h"

#include <cpp-httplib/httplib.h>

#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "api/common/client_identity.h"
#include "util/log.h"

namespace sf {

bool client_gone(const httplib::Request &req, std::chrono::steady_clock::time_point &last_check) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_check < std::chrono::milliseconds(100)) return false;
    last_check = now;
    return req.is_connection_closed();
}

priority_headers priority_headers_of(const httplib::Request &req) {
    return {req.get_header_value("X-Superfluid-Priority"), req.get_header_value("Authorization"),
            req.get_header_value("x-api-key"), req.get_header_value("User-Agent")};
}

bool apply_priority(const httplib::Request &req, const priority_config &cfg,
                    const std::string &secret, generate_request &greq, httplib::Response &res,
                    api_error &err) {
    if (!resolve_priority(greq.cls_from_body, priority_headers_of(req), cfg, greq.cls, err))
        return false;
    res.set_header("X-Superfluid-Priority", class_name(greq.cls));
    greq.user_agent = req.get_header_value("User-Agent");
    greq.client     = client_identity(priority_headers_of(req),
                                      req.remote_addr + ":" + std::to_string(req.remote_port), secret);
    // One line per generation request: who asked, in which class.
    SF_LOG_INFO("http", "%s %s: class %s, model \"%s\", user-agent \"%s\"", req.method.c_str(),
                req.path.c_str(), class_name(greq.cls), greq.model.c_str(),
                greq.user_agent.c_str());
    return true;
}

void cancel_and_wait(session &s) {
    if (s.finished()) return;
    s.cancel();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!s.finished() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

bool write_sse_event(httplib::DataSink &sink, const std::string &event, const std::string &data) {
    std::string frame = event.empty() ? "" : "event: " + event + "\n";
    frame += "data: " + data + "\n\n";
    return sink.write(frame.data(), frame.size());
}

}  // namespace sf
