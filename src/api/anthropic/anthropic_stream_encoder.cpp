#include "api/anthropic/anthropic_stream_encoder.h"

#include <nlohmann/json.hpp>

namespace sf {

namespace {

using events = std::vector<anthropic_stream::event>;

void append(events &to, events &&more) {
    for (auto &e : more) to.push_back(std::move(e));
}

// The frames of `evs`; `id` on the last one.
std::string frames(const events &evs, const std::string &id) {
    std::string out;
    for (size_t i = 0; i < evs.size(); ++i)
        out += sse_frame(evs[i].first, evs[i].second, i + 1 == evs.size() ? id : "");
    return out;
}

}  // namespace

anthropic_stream_encoder::anthropic_stream_encoder(anthropic_meta meta,
                                                   std::unique_ptr<chat_output_parser> parser,
                                                   std::vector<std::string> client_stops,
                                                   bool shutting_down)
    : parser_(std::move(parser)),
      events_(std::move(meta)),
      stops_(std::move(client_stops)),
      shutting_down_(shutting_down) {}

std::string anthropic_stream_encoder::open(bool resumed) {
    if (resumed) started_ = true;
    return "";
}

void anthropic_stream_encoder::skip(const session_event &token) {
    if (!started_) (void)events_.start(token.cached_tokens);
    started_ = true;
    for (const auto &d : parser_->push(token.text)) (void)events_.on_delta(d);
}

std::string anthropic_stream_encoder::token(const session_event &token, const std::string &id) {
    events out;
    if (!started_) {
        started_ = true;
        append(out, events_.start(token.cached_tokens));
    }
    for (const auto &d : parser_->push(token.text)) append(out, events_.on_delta(d));
    return frames(out, id);
}

std::string anthropic_stream_encoder::finish(const session_event &fin, const std::string &id) {
    events out;
    if (!started_) {
        started_ = true;
        append(out, events_.start(fin.cached_tokens));
    }
    if (fin.reason == finish_reason::ERROR || fin.reason == finish_reason::CANCELLED) {
        api_error e{shutting_down_ ? 503 : 500, "",
                    fin.error.empty() ? "generation failed" : fin.error, "", ""};
        append(out, events_.fail(e));
        return frames(out, id);
    }
    auto deltas = parser_->push(fin.text);
    for (auto &d : parser_->finish()) deltas.push_back(std::move(d));
    for (const auto &d : deltas) append(out, events_.on_delta(d));
    std::string stop_sequence;
    const auto reason =
        anthropic_stop_reason(fin, !parser_->message().tool_calls.empty(), stops_, stop_sequence);
    append(out, events_.finish(reason, stop_sequence, fin.completion_tokens, fin.cached_tokens));
    return frames(out, id);
}

std::string anthropic_stream_encoder::idle() {
    if (started_) return frames({anthropic_stream::ping()}, "");
    // A prefill longer than the keep-alive interval: message_start with what is known now
    // (nothing read from the cache yet); message_delta's cumulative usage has the count.
    started_ = true;
    return frames(events_.start(0), "");
}

std::string anthropic_client_meta(const std::vector<std::string> &stop_sequences) {
    if (stop_sequences.empty()) return "";
    return nlohmann::json{{"stop_sequences", stop_sequences}}.dump();
}

std::vector<std::string> anthropic_stop_sequences(const std::string &client_meta) {
    std::vector<std::string> out;
    const auto j = nlohmann::json::parse(client_meta, nullptr, false);
    if (!j.is_object() || !j.contains("stop_sequences") || !j["stop_sequences"].is_array())
        return out;
    for (const auto &v : j["stop_sequences"])
        if (v.is_string()) out.push_back(v.get<std::string>());
    return out;
}

}  // namespace sf
