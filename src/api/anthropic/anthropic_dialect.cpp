#include "api/anthropic/anthropic_dialect.h"

#include "api/anthropic/anthropic_stream_encoder.h"
#include "chat/output_parser.h"

namespace sf {

namespace {

// tool_use ids of a session's answer: unique per session, the same for every reader.
std::string tool_use_id_prefix(const session &s) {
    return "toolu_" + s.id().substr(5) + "_";
}

}  // namespace

bool anthropic_generation::parse(const std::string &body, generate_request &greq, api_error &err) {
    if (!parse_anthropic_messages(body, count_only_, greq, opts_, err)) return false;
    greq.api         = "anthropic.messages";  // journaled: re-attach replays Anthropic events
    greq.client_meta = anthropic_client_meta(opts_.stop_sequences);
    return true;
}

api_error anthropic_generation::refusal(const start_error &se) const {
    return anthropic_refusal(se);
}

std::unique_ptr<stream_encoder> anthropic_generation::encoder(const session &s) {
    return anthropic_session_encoder(s, shutting_down_);
}

reply_body anthropic_generation::body(const session &s, const collected_answer &a) {
    chat_output_parser parser(s.parse_spec(), tool_use_id_prefix(s));
    parser.push(a.text);
    parser.finish();
    anthropic_meta meta = anthropic_session_meta(s);
    meta.output_tokens  = a.fin.completion_tokens;
    meta.cached_tokens  = a.fin.cached_tokens;
    std::string stop_sequence;
    const auto reason = anthropic_stop_reason(a.fin, !parser.message().tool_calls.empty(),
                                              opts_.stop_sequences, stop_sequence);
    return {anthropic_message_response(meta, parser.message(), reason, stop_sequence)};
}

anthropic_meta anthropic_session_meta(const session &s) {
    return anthropic_meta{"msg_" + s.id().substr(5), s.model(), s.prompt_tokens(), 0, 0};
}

std::unique_ptr<stream_encoder> anthropic_session_encoder(const session &s, bool shutting_down) {
    return std::make_unique<anthropic_stream_encoder>(
        anthropic_session_meta(s),
        std::make_unique<chat_output_parser>(s.parse_spec(), tool_use_id_prefix(s)),
        anthropic_stop_sequences(s.client_meta()), shutting_down);
}

}  // namespace sf
