#include "http/responses_stream.h"

#include <cpp-httplib/httplib.h>

#include "http/stream_driver.h"

namespace sf {

std::string responses_id(const std::string &session_id) {
    return "resp_" + session_id;
}

nlohmann::json responses_echo(const session &s) {
    auto j = nlohmann::json::parse(s.client_meta(), nullptr, false);
    return j.is_object() ? j : nlohmann::json::object();
}

std::unique_ptr<responses_stream_encoder> responses_encoder(const session &s,
                                                            int64_t skip_through) {
    responses_meta meta;
    meta.id            = responses_id(s.id());
    meta.model         = s.model();
    meta.created       = s.created_unix();
    meta.echo          = responses_echo(s);
    meta.prompt_tokens = s.prompt_tokens();
    return std::make_unique<responses_stream_encoder>(
        std::move(meta),
        std::make_unique<chat_output_parser>(s.parse_spec(), "call_" + s.id() + "_"), skip_through);
}

responses_run::responses_run(std::shared_ptr<session> sess)
    : s(std::move(sess)), enc(responses_encoder(*s)) {
    (void)enc->open(false);
}

void responses_run::feed(std::chrono::milliseconds wait) {
    if (done) return;
    std::vector<session_event> evs;
    std::optional<session_event> fin;
    if (!s->read(cursor, evs, fin, wait)) return;
    for (const auto &ev : evs) {
        ++cursor;
        (void)enc->token(ev, "");
    }
    if (!fin) return;
    (void)enc->finish(*fin, "");
    done = true;
}

nlohmann::json responses_run::object() const {
    auto obj = enc->response();
    if (!done && cursor == 0) obj["status"] = "queued";
    return obj;
}

void serve_responses_stream(const httplib::Request &req, httplib::Response &res,
                            std::shared_ptr<session> s, int64_t skip_through,
                            bool cancel_on_disconnect) {
    auto enc = responses_encoder(*s, skip_through);
    serve_session_stream(req, res, std::move(s), std::move(enc), 0, cancel_on_disconnect);
}

}  // namespace sf
