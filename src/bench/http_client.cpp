#include "bench/http_client.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include <cpp-httplib/httplib.h>

namespace sf::bench {

using nlohmann::json;

double now_s() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string normalize_base_url(std::string url) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    if (url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0) url.resize(url.size() - 3);
    if (url.find("://") == std::string::npos) url = "http://" + url;
    return url;
}

namespace {

std::mutex g_models_mu;
std::map<std::string, std::string> g_models;  // base URL → served model id

std::string model_for(const std::string &base_url) {
    std::lock_guard<std::mutex> lk(g_models_mu);
    auto it = g_models.find(base_url);
    return it == g_models.end() ? "" : it->second;
}

}  // namespace

std::string discover_model(const std::string &base_url) {
    std::string body;
    if (http_get(base_url, "/v1/models", 10, &body) != 200) return "";
    json j = json::parse(body, nullptr, false);
    std::string id;
    if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty())
        id = j["data"][0].value("id", "");
    std::lock_guard<std::mutex> lk(g_models_mu);
    g_models[base_url] = id;
    return id;
}

json chat_body(json messages, int max_tokens, int seed_offset) {
    // Seeded sampling rather than greedy: a random-weight test model decodes greedily into one
    // repeated token (often whitespace, which llama-server holds back while streaming), while a
    // seeded sample is varied text and still the same on every run.
    return json{{"model", "bench"},
                {"messages", std::move(messages)},
                {"max_tokens", max_tokens},
                {"temperature", 1.0},
                {"top_k", 40},
                {"top_p", 1.0},
                {"seed", 1234 + seed_offset},
                {"stream", true}};
}

void split_lines(std::string &buf, const char *data, size_t len,
                 const std::function<void(const std::string &)> &line) {
    buf.append(data, len);
    size_t pos;
    while ((pos = buf.find('\n')) != std::string::npos) {
        std::string l = buf.substr(0, pos);
        buf.erase(0, pos + 1);
        if (!l.empty() && l.back() == '\r') l.pop_back();
        line(l);
    }
}

void sse_reader::feed(const char *data, size_t len, double t) {
    split_lines(buf_, data, len, [&](const std::string &l) { line(l, t); });
}

void sse_reader::line(const std::string &l, double t) {
    if (l.rfind("id:", 0) == 0) {
        // Superfluid's SESSION:INDEX (http/session_ids.h); anything else is not an index.
        const size_t colon = l.rfind(':');
        char *end          = nullptr;
        const long long n  = std::strtoll(l.c_str() + colon + 1, &end, 10);
        if (colon > 2 && end && *end == '\0' && end != l.c_str() + colon + 1)
            out_.event_ids.push_back(n);
        return;
    }
    if (l.rfind("data:", 0) != 0) return;
    std::string payload = l.substr(5);
    if (!payload.empty() && payload[0] == ' ') payload.erase(0, 1);
    if (payload == "[DONE]") {
        out_.done = true;
        return;
    }
    json j = json::parse(payload, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return;
    if (j.contains("error")) {
        out_.cut   = true;
        out_.error = j["error"].is_object() ? j["error"].value("message", "in-band error")
                                            : j["error"].dump();
        return;
    }
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
        const json &c = j["choices"][0];
        if (c.contains("finish_reason") && c["finish_reason"].is_string())
            out_.finish_reason = c["finish_reason"].get<std::string>();
        const json &d = c.value("delta", json::object());
        if (d.is_object()) delta(d, t);
    }
    if (j.contains("usage") && j["usage"].is_object()) {
        const json &u = j["usage"];
        if (u.contains("prompt_tokens")) out_.prompt_tokens = u["prompt_tokens"].get<int>();
        if (u.contains("completion_tokens"))
            out_.completion_tokens = u["completion_tokens"].get<int>();
        if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object() &&
            u["prompt_tokens_details"].contains("cached_tokens"))
            out_.cached_tokens = u["prompt_tokens_details"]["cached_tokens"].get<int>();
    }
    // llama-server's own report: cache_n prompt tokens reused, prompt_n recomputed.
    if (j.contains("timings") && j["timings"].is_object()) {
        const json &tm = j["timings"];
        // Speculative decoding: llama-server sends these in every chunk's timings, Superfluid
        // in the last; the last value is the request's count.
        if (tm.contains("draft_n") && tm["draft_n"].is_number_integer())
            out_.draft_n = tm["draft_n"].get<int>();
        if (tm.contains("draft_n_accepted") && tm["draft_n_accepted"].is_number_integer())
            out_.draft_n_accepted = tm["draft_n_accepted"].get<int>();
        if (tm.contains("cache_n")) {
            int cache_n = tm["cache_n"].get<int>();
            if (out_.cached_tokens <= 0) out_.cached_tokens = cache_n;
            if (out_.prompt_tokens < 0 && tm.contains("prompt_n"))
                out_.prompt_tokens = tm["prompt_n"].get<int>() + cache_n;
        }
    }
}

void sse_reader::delta(const json &d, double t) {
    std::string piece;
    for (const char *k : {"reasoning_content", "content"}) {
        if (d.contains(k) && d[k].is_string()) piece += d[k].get<std::string>();
    }
    if (d.contains("tool_calls") && d["tool_calls"].is_array()) {
        for (const json &tc : d["tool_calls"]) {
            if (!tc.is_object()) continue;
            const int index = tc.value("index", 0);
            out_.tool_calls = std::max(out_.tool_calls, index + 1);
            if (index != 0) continue;
            if (tc.contains("id") && tc["id"].is_string())
                out_.tool_call_id = tc["id"].get<std::string>();
            if (!tc.contains("function") || !tc["function"].is_object()) continue;
            const json &f = tc["function"];
            if (f.contains("name") && f["name"].is_string()) {
                const auto n = f["name"].get<std::string>();
                out_.tool_name += n;
                piece += n;  // the call's header is visible output: it starts the answer
            }
            if (f.contains("arguments") && f["arguments"].is_string()) {
                const auto a = f["arguments"].get<std::string>();
                out_.tool_arguments += a;
                piece += a;
            }
        }
    }
    if (!piece.empty()) {
        if (out_.ttft_s < 0) out_.ttft_s = t;
        out_.token_times.push_back(t);
        out_.pieces.push_back(std::move(piece));
    }
}

namespace {

// Reads a streamed answer (POST body, or GET when `body` is empty) into a stream_result.
stream_result read_stream(const std::string &base_url, const std::string &path,
                          const std::string &body, const httplib::Headers &headers,
                          const request_options &opts, const feeder_factory &make) {
    stream_result r;
    httplib::Client cli(base_url);
    cli.set_connection_timeout(10, 0);
    cli.set_read_timeout(static_cast<time_t>(opts.timeout_s), 0);
    cli.set_write_timeout(60, 0);
    std::unique_ptr<stream_feeder> feeder = make ? make(r) : std::make_unique<sse_reader>(r);
    stream_feeder &reader                 = *feeder;
    std::string raw;
    bool dropped = false;
    httplib::Request req;
    req.method           = body.empty() ? "GET" : "POST";
    req.path             = path;
    req.headers          = headers;
    req.body             = body;
    req.response_handler = [&](const httplib::Response &res) {
        r.status = res.status;  // read here too: a client that drops the answer gets no Response
        if (res.has_header("X-Superfluid-Session"))
            r.session = res.get_header_value("X-Superfluid-Session");
        return true;
    };
    if (!body.empty()) req.set_header("Content-Type", "application/json");
    r.sent_at            = now_s();
    req.content_receiver = [&](const char *data, size_t len, uint64_t, uint64_t) {
        double t = now_s() - r.sent_at;
        if (raw.size() < 2048) raw.append(data, std::min<size_t>(len, 2048));
        size_t before = r.pieces.size();
        reader.feed(data, len, t);
        if (opts.on_token) {
            for (size_t i = before; i < r.pieces.size(); ++i)
                opts.on_token(static_cast<int>(i + 1), r.token_times[i]);
        }
        if (opts.cut_after_tokens > 0 &&
            static_cast<int>(r.pieces.size()) >= opts.cut_after_tokens && !r.done) {
            dropped = true;
            return false;  // the client goes away mid-answer
        }
        return true;
    };
    httplib::Result res = cli.send(req);
    r.total_s           = now_s() - r.sent_at;
    if (res) {
        r.status = res->status;
        if (r.status != 200) {
            r.cut = true;
            if (r.error.empty()) r.error = "HTTP " + std::to_string(r.status) + ": " + raw;
        }
    } else if (dropped) {
        r.error = "dropped by the client";
    } else {
        r.cut = true;
        if (r.error.empty()) r.error = "transport: " + httplib::to_string(res.error());
    }
    if (!r.done) r.cut = true;
    r.ok = r.status == 200 && r.done && r.error.empty();
    return r;
}

}  // namespace

stream_result get_session_stream(const std::string &base_url, const std::string &session,
                                 const request_options &opts) {
    return read_stream(base_url, "/v1/sessions/" + session + "/events?include_usage=true", "", {},
                       opts, nullptr);
}

stream_result post_stream(const std::string &base_url, const std::string &path, json body,
                          const request_options &opts, const feeder_factory &make) {
    const std::string model = model_for(base_url);
    if (!model.empty()) body["model"] = model;
    httplib::Headers headers;
    if (!opts.priority.empty()) headers.emplace("X-Superfluid-Priority", opts.priority);
    if (opts.detach) headers.emplace("X-Superfluid-Detach", "true");
    if (!opts.api_key.empty()) headers.emplace("Authorization", "Bearer " + opts.api_key);
    return read_stream(base_url, path, body.dump(), headers, opts, make);
}

stream_result get_stream(const std::string &base_url, const std::string &path,
                         const request_options &opts, const feeder_factory &make) {
    return read_stream(base_url, path, "", {}, opts, make);
}

stream_result post_chat_stream(const std::string &base_url, json body,
                               const request_options &opts) {
    body["stream"]         = true;
    body["stream_options"] = {{"include_usage", true}};
    std::string model      = model_for(base_url);
    if (!model.empty()) body["model"] = model;
    httplib::Headers headers;
    if (!opts.priority.empty()) {
        body["priority"] = opts.priority;
        headers.emplace("X-Superfluid-Priority", opts.priority);
    }
    if (opts.detach) headers.emplace("X-Superfluid-Detach", "true");
    if (!opts.api_key.empty()) headers.emplace("Authorization", "Bearer " + opts.api_key);
    return read_stream(base_url, "/v1/chat/completions", body.dump(), headers, opts, nullptr);
}

int http_get(const std::string &base_url, const std::string &path, double timeout_s,
             std::string *body) {
    httplib::Client cli(base_url);
    cli.set_connection_timeout(
        static_cast<time_t>(timeout_s),
        static_cast<time_t>((timeout_s - static_cast<int>(timeout_s)) * 1e6));
    cli.set_read_timeout(static_cast<time_t>(timeout_s) + 1, 0);
    auto res = cli.Get(path);
    if (!res) return 0;
    if (body) *body = res->body;
    return res->status;
}

double superfluid_metric(const std::string &base_url, const std::string &name, double timeout_s) {
    std::string body;
    if (http_get(base_url, "/metrics", timeout_s, &body) != 200) return -1;
    std::istringstream in(body);
    std::string line;
    const std::string key = "superfluid:" + name + " ";
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size()));
    return -1;
}

}  // namespace sf::bench
