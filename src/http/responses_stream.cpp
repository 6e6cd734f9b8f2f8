#include "http/responses_stream.h"

#include <cpp-httplib/httplib.h>

#include "http/route_util.h"

namespace sf {

std::string responses_id(const std::string &session_id) {
    return "resp_" + session_id;
}

nlohmann::json responses_echo(const session &s) {
    auto j = nlohmann::json::parse(s.client_meta(), nullptr, false);
    return j.is_object() ? j : nlohmann::json::object();
}

// Everything the events depend on comes from the session (id, model, creation time, echo), so
// a reader in another process (after a head restart) makes the same ones.
responses_run::responses_run(std::shared_ptr<session> sess, int64_t skip_through)
    : s(std::move(sess)),
      parser(s->parse_spec(), "call_" + s->id() + "_"),
      builder(responses_id(s->id()), s->model(), s->created_unix(), responses_echo(*s)) {
    builder.skip_through(skip_through);
}

std::string responses_run::feed(std::chrono::milliseconds wait) {
    std::string out;
    if (!started) {
        started = true;
        out += builder.start();
    }
    if (done) return out;
    std::vector<session_event> evs;
    std::optional<session_event> fin;
    if (!s->read(cursor, evs, fin, wait)) return out;
    for (const auto &ev : evs) {
        ++cursor;
        if (!ev.text.empty()) out += builder.apply(parser.push(ev.text));
    }
    if (!fin) return out;
    const bool failed = fin->reason == finish_reason::ERROR;
    if (!failed) out += builder.apply(parser.push(fin->text));
    out += builder.apply(parser.finish());
    out += builder.finish(fin->reason,
                          failed ? (fin->error.empty() ? "generation failed" : fin->error) : "",
                          s->prompt_tokens(), fin->completion_tokens, fin->cached_tokens);
    done = true;
    return out;
}

nlohmann::json responses_run::object() const {
    auto obj = builder.response();
    if (!done && cursor == 0) obj["status"] = "queued";
    return obj;
}

void serve_responses_stream(const httplib::Request &req, httplib::Response &res,
                            std::shared_ptr<responses_run> r, bool cancel_on_disconnect) {
    auto last_check =
        std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [r, &req, last_check, cancel_on_disconnect](size_t, httplib::DataSink &sink) {
            if (r->done) return false;
            std::string frames = r->feed(std::chrono::milliseconds(100));
            bool keep          = !client_gone(req, *last_check) &&
                        (frames.empty() || sink.write(frames.data(), frames.size()));
            if (!keep) {
                if (cancel_on_disconnect) r->s->cancel();
                return false;
            }
            if (r->done) sink.done();
            return true;
        },
        [r, cancel_on_disconnect](bool success) {
            if ((!success || !r->done) && cancel_on_disconnect) r->s->cancel();
        });
}

}  // namespace sf
