#include "api/responses/responses_run.h"

#include "api/common/json_fields.h"

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

responses_run::responses_run(const session &sess) : s(&sess), enc(responses_encoder(sess)) {
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

bool responses_flag(const session &s, const char *name) {
    return fields::flag_or(responses_echo(s), name, false);
}

std::string responses_object_body(const session &s, std::string *status) {
    responses_run r(s);
    r.feed(std::chrono::milliseconds(0));
    const auto obj = r.object();
    if (status) *status = obj.value("status", "");
    return obj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sf
