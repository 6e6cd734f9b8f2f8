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

bool first_sighting(const std::string &key) {
    static std::mutex mu;
    static std::set<std::string> seen;
    std::lock_guard<std::mutex> lock(mu);
    return seen.size() < 256 && seen.insert(key).second;
}

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

bool wait_for_session(session &s, const httplib::Request &req, std::string &text,
                      session_event &fin_out) {
    size_t cursor   = 0;
    auto last_check = std::chrono::steady_clock::now();
    for (;;) {
        std::vector<session_event> evs;
        std::optional<session_event> fin;
        bool got = s.read(cursor, evs, fin, std::chrono::milliseconds(100));
        if (client_gone(req, last_check)) {
            s.cancel();
            return false;
        }
        if (!got) continue;
        for (const auto &ev : evs) text += ev.text;
        cursor += evs.size();
        if (!fin) continue;
        text += fin->text;
        fin_out = std::move(*fin);
        return true;
    }
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
