#include "api/ollama/ollama_stream_encoder.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace sf {

namespace {

using time_point = ollama_stream_clock::time_point;

int64_t ns_between(time_point a, time_point b) {
    return b > a ? std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count() : 0;
}

bool has_text(const ollama_delta &d) {
    return !d.content.empty() || !d.thinking.empty() || !d.tool_calls.empty();
}

}  // namespace

ollama_stream_encoder::ollama_stream_encoder(ollama_stream_meta meta,
                                             std::unique_ptr<chat_output_parser> parser,
                                             ollama_stream_clock clock)
    : meta_(std::move(meta)), parser_(std::move(parser)), clock_(std::move(clock)) {}

ollama_stats ollama_answer_stats(const ollama_stream_clock &clock, std::optional<time_point> first,
                                 int32_t prompt_tokens, int32_t cached_tokens,
                                 int32_t completion_tokens) {
    const auto now = clock.now();
    ollama_stats st;
    st.total_ns          = ns_between(clock.start, now);
    st.load_ns           = ns_between(clock.start, clock.accepted);
    st.prompt_eval_ns    = ns_between(clock.accepted, first ? *first : now);
    st.eval_ns           = first ? ns_between(*first, now) : 0;
    st.prompt_eval_count = prompt_tokens - std::clamp(cached_tokens, 0, prompt_tokens);
    st.eval_count        = completion_tokens;
    return st;
}

int32_t ollama_eval_count(const session_event &fin) {
    // A STOP with no stop string is the model's own end-of-generation token.
    const bool eog = fin.reason == finish_reason::STOP && fin.stop_string.empty();
    return fin.completion_tokens + (eog ? 1 : 0);
}

ollama_delta ollama_split(chat_output_parser *parser, const std::string &text, bool final) {
    ollama_delta d;
    if (!parser) {
        d.content = text;
        return d;
    }
    auto deltas = parser->push(text);
    if (final) {
        auto rest = parser->finish();
        deltas.insert(deltas.end(), rest.begin(), rest.end());
    }
    for (const auto &x : deltas) {
        if (x.type == chat_delta::kind::REASONING) d.thinking += x.text;
        if (x.type == chat_delta::kind::CONTENT) d.content += x.text;
    }
    if (final) d.tool_calls = parser->message().tool_calls;
    return d;
}

ollama_delta ollama_stream_encoder::take(const std::string &text, bool final) {
    return ollama_split(parser_.get(), text, final);
}

std::string ollama_stream_encoder::line(const ollama_delta &d, const ollama_done *done) const {
    return (meta_.chat ? ollama_chat_line(meta_.model, d, done)
                       : ollama_generate_line(meta_.model, d, done)) +
           "\n";
}

void ollama_stream_encoder::skip(const session_event &token) {
    if (count_ >= meta_.limit) return;
    if (count_++ == 0) cached_ = token.cached_tokens;
    if (!got_first_) {  // a re-attached reader: its durations count from now
        got_first_ = true;
        first_     = clock_.now();
    }
    (void)take(token.text, false);
    if (!meta_.chat) generated_.push_back(token.token);
    if (count_ >= meta_.limit) ended_ = true;
}

std::string ollama_stream_encoder::token(const session_event &token, const std::string &) {
    if (ended_) return "";
    if (count_++ == 0) cached_ = token.cached_tokens;
    if (!got_first_) {
        got_first_ = true;
        first_     = clock_.now();
    }
    if (!meta_.chat) generated_.push_back(token.token);
    std::string out = line(take(token.text, false), nullptr);
    if (count_ < meta_.limit) return out;
    // options.num_ctx reached: the answer ends here, as Ollama's context would hold no more.
    ended_               = true;
    const ollama_delta d = take("", true);
    if (has_text(d)) out += line(d, nullptr);
    return out + done_line("length", static_cast<int32_t>(count_), cached_);
}

std::string ollama_stream_encoder::finish(const session_event &fin, const std::string &) {
    if (ended_) return "";
    ended_ = true;
    if (fin.reason == finish_reason::ERROR || fin.reason == finish_reason::CANCELLED) {
        // The headers are gone: the error goes in-band, as Ollama reports a failed stream.
        std::string out;
        if (!fin.text.empty()) out += line(take(fin.text, false), nullptr);
        return out + ollama_error_body(fin.error.empty() ? "generation failed" : fin.error) + "\n";
    }
    std::string out;
    const ollama_delta d = take(fin.text, true);
    if (has_text(d)) out += line(d, nullptr);
    return out + done_line(fin.reason == finish_reason::LENGTH ? "length" : "stop",
                           ollama_eval_count(fin), fin.cached_tokens);
}

// As in Ollama, prompt_eval_count counts only the prompt tokens evaluated (the prefix cache
// supplied the rest) and prompt_eval_duration is the time until the first token; `context`
// (generate) is the whole exchange, to be passed back for a follow-up.
std::string ollama_stream_encoder::done_line(const std::string &reason, int32_t completion_tokens,
                                             int32_t cached_tokens) {
    ollama_done d;
    d.reason = reason;
    d.stats  = ollama_answer_stats(clock_, got_first_ ? std::optional(first_) : std::nullopt,
                                   meta_.prompt_tokens, cached_tokens, completion_tokens);
    std::vector<token_id> context;
    if (!meta_.chat && !meta_.prompt_token_ids.empty()) {
        context = meta_.prompt_token_ids;
        context.insert(context.end(), generated_.begin(), generated_.end());
        d.context = &context;
    }
    return line(ollama_delta{}, &d);
}

std::string ollama_client_meta(bool templated) {
    return templated ? "" : R"({"raw":true})";
}

bool ollama_templated(const std::string &client_meta) {
    const auto j = nlohmann::json::parse(client_meta, nullptr, false);
    return !(j.is_object() && j.value("raw", false));
}

}  // namespace sf
