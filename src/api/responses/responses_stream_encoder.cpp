#include "api/responses/responses_stream_encoder.h"

namespace sf {

namespace {

// `frames` (SSE frames, each ending in a blank line) with `id:` put on the last one.
std::string with_id_on_last(std::string frames, const std::string &id) {
    if (frames.empty() || id.empty()) return frames;
    // The builder's frames hold one JSON `data:` line each, so "\n\n" only ends a frame.
    const size_t end  = frames.size() - 2;
    const size_t prev = frames.rfind("\n\n", end - 1);
    const size_t at   = prev == std::string::npos ? 0 : prev + 2;
    frames.insert(at, "id: " + id + "\n");
    return frames;
}

}  // namespace

responses_stream_encoder::responses_stream_encoder(responses_meta meta,
                                                   std::unique_ptr<chat_output_parser> parser,
                                                   int64_t skip_through)
    : parser_(std::move(parser)),
      builder_(std::move(meta.id), std::move(meta.model), meta.created, std::move(meta.echo)),
      prompt_tokens_(meta.prompt_tokens) {
    builder_.skip_through(skip_through);
}

std::string responses_stream_encoder::start() {
    if (started_) return "";
    started_ = true;
    return builder_.start();
}

std::string responses_stream_encoder::open(bool resumed) {
    std::string opening = start();
    return resumed ? "" : opening;  // a re-attached reader saw the opening events then
}

void responses_stream_encoder::skip(const session_event &token) {
    (void)start();
    if (!token.text.empty()) (void)builder_.apply(parser_->push(token.text));
}

std::string responses_stream_encoder::token(const session_event &token, const std::string &id) {
    std::string out = start();
    if (!token.text.empty()) out += builder_.apply(parser_->push(token.text));
    return with_id_on_last(std::move(out), id);
}

std::string responses_stream_encoder::finish(const session_event &fin, const std::string &id) {
    std::string out   = start();
    const bool failed = fin.reason == finish_reason::ERROR;
    if (!failed) out += builder_.apply(parser_->push(fin.text));
    out += builder_.apply(parser_->finish());
    out += builder_.finish(fin.reason,
                           failed ? (fin.error.empty() ? "generation failed" : fin.error) : "",
                           prompt_tokens_, fin.completion_tokens, fin.cached_tokens);
    return with_id_on_last(std::move(out), id);
}

}  // namespace sf
