#include "api/openai/openai_dialect.h"

#include <chrono>

#include "api/openai/openai_error.h"
#include "api/openai/openai_stream.h"
#include "chat/output_parser.h"

namespace sf {

namespace {

// Tool call ids of a session's answer: unique per session, the same for every reader.
std::string tool_call_id_prefix(const session &s) {
    return "call_" + s.id() + "_";
}

int64_t unix_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

bool openai_generation::parse(const std::string &body, generate_request &greq, api_error &err) {
    return chat_ ? parse_openai_chat(body, greq, opts_, err)
                 : parse_openai_completion(body, greq, opts_, err);
}

api_error openai_generation::refusal(const start_error &se) const {
    return openai_refusal(se);
}

std::unique_ptr<stream_encoder> openai_generation::encoder(const session &s) {
    return openai_session_encoder(s, chat_, opts_.include_usage);
}

reply_body openai_generation::body(const session &s, const collected_answer &a) {
    openai_meta meta       = openai_session_meta(s, chat_);
    meta.completion_tokens = a.fin.completion_tokens;
    meta.cached_tokens     = a.fin.cached_tokens;  // known once the worker placed it
    meta.draft_tokens      = a.fin.draft_tokens;
    meta.draft_accepted    = a.fin.draft_accepted;
    if (!chat_) return {openai_completion_response(meta, a.text, a.fin.reason)};
    chat_output_parser parser(s.parse_spec(), tool_call_id_prefix(s));
    parser.push(a.text);
    parser.finish();
    const auto &msg = parser.message();
    return {openai_chat_message_response(
        meta, msg, openai_chat_finish_reason(a.fin.reason, !msg.tool_calls.empty()))};
}

openai_meta openai_session_meta(const session &s, bool chat) {
    openai_meta meta;
    meta.id            = (chat ? "chatcmpl-" : "cmpl-") + s.id();
    meta.model         = s.model();
    meta.created       = s.created_unix() > 0 ? s.created_unix() : unix_seconds();
    meta.prompt_tokens = s.prompt_tokens();
    meta.cached_tokens = s.cached_tokens();
    return meta;
}

std::unique_ptr<stream_encoder> openai_session_encoder(const session &s, bool chat,
                                                       bool include_usage) {
    auto parser = chat
                      ? std::make_unique<chat_output_parser>(s.parse_spec(), tool_call_id_prefix(s))
                      : nullptr;
    return std::make_unique<openai_stream_encoder>(openai_session_meta(s, chat), std::move(parser),
                                                   include_usage);
}

}  // namespace sf
