#include "api/openai/openai_stream.h"

#include "api/common/api_error.h"
#include "api/openai/openai_error.h"

namespace sf {

namespace {
const std::string k_done = "data: [DONE]\n\n";
}

openai_stream_encoder::openai_stream_encoder(openai_meta meta,
                                             std::unique_ptr<chat_output_parser> parser,
                                             bool include_usage)
    : meta_(std::move(meta)), parser_(std::move(parser)), include_usage_(include_usage) {}

std::string openai_stream_encoder::open(bool resumed) {
    if (!parser_ || resumed) return "";
    return sse_frame("", openai_chat_chunk(meta_, nullptr, true, nullptr, false));
}

void openai_stream_encoder::skip(const session_event &token) {
    if (parser_) parser_->push(token.text);
}

std::string openai_stream_encoder::token(const session_event &token, const std::string &id) {
    if (token.text.empty()) return "";
    if (!parser_)
        return sse_frame("", openai_completion_chunk(meta_, &token.text, nullptr, false), id);
    // The token's id goes on the last chunk it completes (a re-attach resumes after it).
    std::string out;
    const auto deltas = parser_->push(token.text);
    for (size_t i = 0; i < deltas.size(); ++i)
        out += sse_frame("", openai_chat_delta_chunk(meta_, deltas[i]),
                         i + 1 == deltas.size() ? id : "");
    return out;
}

std::string openai_stream_encoder::finish(const session_event &fin, const std::string &id) {
    meta_.completion_tokens = fin.completion_tokens;
    meta_.cached_tokens     = fin.cached_tokens;  // known once the worker placed it
    meta_.draft_tokens      = fin.draft_tokens;
    meta_.draft_accepted    = fin.draft_accepted;
    std::string out;
    if (fin.reason == finish_reason::ERROR) {
        // Headers are gone: report in-band, then end the stream cleanly (never hang).
        api_error e{500, "server_error", fin.error.empty() ? "generation failed" : fin.error, "",
                    ""};
        return sse_frame("", openai_error_body(e)) + k_done;
    }
    if (parser_) {
        auto deltas = parser_->push(fin.text);
        for (auto &d : parser_->finish()) deltas.push_back(std::move(d));
        for (const auto &d : deltas) out += sse_frame("", openai_chat_delta_chunk(meta_, d));
        const char *reason =
            openai_chat_finish_reason(fin.reason, !parser_->message().tool_calls.empty());
        // The end's id goes on its last frame: a reader holding it has the whole end.
        out += sse_frame("", openai_chat_finish_chunk(meta_, reason), include_usage_ ? "" : id);
        if (include_usage_)
            out += sse_frame("", openai_chat_chunk(meta_, nullptr, false, nullptr, true), id);
    } else {
        const std::string *tail = fin.text.empty() ? nullptr : &fin.text;
        out += sse_frame("", openai_completion_chunk(meta_, tail, &fin.reason, false),
                         include_usage_ ? "" : id);
        if (include_usage_)
            out += sse_frame("", openai_completion_chunk(meta_, nullptr, nullptr, true), id);
    }
    return out + k_done;
}

std::string openai_stream_encoder::after_end() {
    return k_done;
}

}  // namespace sf
