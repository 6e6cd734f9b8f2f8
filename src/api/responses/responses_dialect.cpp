#include "api/responses/responses_dialect.h"

#include "api/openai/openai_error.h"
#include "api/responses/responses_run.h"
#include "util/log.h"

namespace sf {

namespace {

// One log line per set of tool types not offered to the model (not one per request).
void log_skipped_tools(const std::vector<std::string> &types) {
    std::string list;
    for (const auto &t : types) list += (list.empty() ? "'" : ", '") + t + "'";
    if (!log::first_sighting("tools:" + list)) return;
    SF_LOG_INFO("responses", "tool types %s skipped: this server runs function and custom tools",
                list.c_str());
}

}  // namespace

bool responses_generation::parse(const std::string &body, generate_request &greq, api_error &err) {
    if (!parse_responses_request(body, greq, opts_, err)) return false;
    if (opts_.background && !journaled_) {
        err = bad_request(
            "background responses need the token journal; this server runs with "
            "--journal off",
            "background", "unsupported_parameter");
        return false;
    }
    if (!opts_.skipped_tools.empty()) log_skipped_tools(opts_.skipped_tools);
    greq.api = "openai.responses";
    // What the response object repeats, journaled with the request: any reader, in this
    // process or after a restart, builds the same object and events from the session alone.
    opts_.echo["background"] = opts_.background;
    opts_.echo["store"]      = opts_.store && journaled_;
    greq.client_meta         = opts_.echo.dump();
    return true;
}

api_error responses_generation::refusal(const start_error &se) const {
    return openai_refusal(se);
}

reply_mode responses_generation::mode() const {
    if (opts_.stream) return reply_mode::STREAM;
    return opts_.background ? reply_mode::AT_ONCE : reply_mode::WAIT;
}

std::unique_ptr<stream_encoder> responses_generation::encoder(const session &s) {
    return responses_encoder(s);
}

reply_body responses_generation::body(const session &s, const collected_answer &) {
    // The object from the session's events as they stand (all of them, once it ended).
    return {responses_object_body(s)};
}

api_error responses_generation::failed(const session_event &fin, bool shutting_down) const {
    api_error e = generation_dialect::failed(fin, shutting_down);
    if (fin.reason == finish_reason::CANCELLED && fin.error.empty())
        e.message = "the response was cancelled";
    return e;
}

}  // namespace sf
