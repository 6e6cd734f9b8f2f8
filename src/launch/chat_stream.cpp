#include "launch/chat_stream.h"

#include <cpp-httplib/httplib.h>
#include <nlohmann/json.hpp>

namespace sf::launch {

using json = nlohmann::json;

namespace {

// Reads SSE frames ("data: {...}\n\n") out of the bytes received so far.
class sse_reader {
  public:
    /** Appends bytes; calls `on_data` with each complete frame's data. */
    void feed(const char *p, size_t n, const std::function<void(const std::string &)> &on_data) {
        buf_.append(p, n);
        size_t end;
        while ((end = buf_.find("\n\n")) != std::string::npos) {
            std::string frame = buf_.substr(0, end);
            buf_.erase(0, end + 2);
            std::string data;
            size_t pos = 0;
            while (pos <= frame.size()) {
                size_t nl        = frame.find('\n', pos);
                std::string line = frame.substr(pos, nl == std::string::npos ? nl : nl - pos);
                if (line.rfind("data:", 0) == 0) {
                    data += line.substr(line.size() > 5 && line[5] == ' ' ? 6 : 5);
                }
                if (nl == std::string::npos) break;
                pos = nl + 1;
            }
            if (!data.empty()) on_data(data);
        }
    }
    const std::string &rest() const { return buf_; }

  private:
    std::string buf_;
};

std::string error_message(const std::string &body, int status) {
    auto j = json::parse(body, nullptr, false);
    if (j.is_object() && j.contains("error")) {
        const auto &e = j["error"];
        if (e.is_object() && e.contains("message") && e["message"].is_string())
            return e["message"].get<std::string>();
        if (e.is_string()) return e.get<std::string>();
    }
    return "the server answered HTTP " + std::to_string(status);
}

}  // namespace

chat_turn_result chat_turn(const chat_turn_options &o, const std::vector<chat_line> &messages,
                           const std::function<void(const std::string &)> &on_reasoning,
                           const std::function<void(const std::string &)> &on_content,
                           const std::atomic<bool> &cancel) {
    chat_turn_result r;
    json body = {{"model", o.model}, {"stream", true}, {"messages", json::array()}};
    for (const auto &m : messages)
        body["messages"].push_back({{"role", m.role}, {"content", m.content}});
    if (o.max_tokens > 0) body["max_tokens"] = o.max_tokens;
    if (o.think >= 0) body["chat_template_kwargs"] = {{"enable_thinking", o.think == 1}};

    httplib::Client cli(o.host, o.port);
    cli.set_connection_timeout(5);
    cli.set_read_timeout(3600);  // a long answer under load; cancel ends it sooner
    httplib::Headers headers = {{"X-Superfluid-Priority", o.priority}};
    sse_reader sse;
    std::string raw;  // an error answer's body
    bool finished = false;
    int status    = 0;
    auto on_data  = [&](const std::string &data) {
        if (data == "[DONE]") {
            finished = true;
            return;
        }
        auto j = json::parse(data, nullptr, false);
        if (!j.is_object()) return;
        if (j.contains("error")) {
            r.error = error_message(data, status);
            return;
        }
        if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return;
        const auto &c = j["choices"][0];
        if (c.contains("delta") && c["delta"].is_object()) {
            const auto &d = c["delta"];
            if (d.contains("reasoning_content") && d["reasoning_content"].is_string())
                on_reasoning(d["reasoning_content"].get<std::string>());
            if (d.contains("content") && d["content"].is_string()) {
                const auto text = d["content"].get<std::string>();
                r.content += text;
                on_content(text);
            }
        }
    };
    httplib::Request req;
    req.method  = "POST";
    req.path    = "/v1/chat/completions";
    req.headers = headers;
    req.body    = body.dump();
    req.set_header("Content-Type", "application/json");
    req.response_handler = [&](const httplib::Response &res) {
        status = res.status;
        if (res.has_header("X-Superfluid-Session"))
            r.session = res.get_header_value("X-Superfluid-Session");
        return true;
    };
    req.content_receiver = [&](const char *p, size_t n, uint64_t, uint64_t) {
        if (cancel.load()) return false;
        if (status != 200) {
            raw.append(p, n);
            return true;
        }
        sse.feed(p, n, on_data);
        return !cancel.load();
    };
    auto res = cli.send(req);
    if (cancel.load()) {
        r.cancelled = true;
        return r;
    }
    if (!res) {
        r.error = "cannot reach the server at " + o.host + ":" + std::to_string(o.port) + " (" +
                  httplib::to_string(res.error()) + ")";
        return r;
    }
    if (res->status != 200) {
        r.error = error_message(raw.empty() ? res->body : raw, res->status);
        return r;
    }
    if (!r.error.empty()) return r;  // an in-band error event
    r.ok = finished;
    if (!finished) r.error = "the answer ended before it was complete";
    return r;
}

}  // namespace sf::launch
