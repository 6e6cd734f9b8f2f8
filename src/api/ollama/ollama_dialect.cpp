#include "api/ollama/ollama_dialect.h"

#include <algorithm>

#include "api/ollama/ollama_response.h"
#include "api/ollama/ollama_stream_encoder.h"
#include "chat/output_parser.h"

namespace sf {

namespace {

using clock_type = std::chrono::steady_clock;

int64_t ns_between(clock_type::time_point a, clock_type::time_point b) {
    return b > a ? std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count() : 0;
}

// The answer's text split as Ollama sends it: thinking, content and whole tool calls (arguments
// as an object), through the chat layer's parser when the request was templated.
ollama_delta split_answer(const session &s, const std::string &text, bool templated) {
    ollama_delta d;
    if (!templated) {
        d.content = text;
        return d;
    }
    chat_output_parser parser(s.parse_spec(), ollama_tool_call_prefix(s.id()));
    auto deltas = parser.push(text);
    auto rest   = parser.finish();
    deltas.insert(deltas.end(), rest.begin(), rest.end());
    for (const auto &x : deltas) {
        if (x.type == chat_delta::kind::REASONING) d.thinking += x.text;
        if (x.type == chat_delta::kind::CONTENT) d.content += x.text;
    }
    d.tool_calls = parser.message().tool_calls;
    return d;
}

}  // namespace

ollama_generation::ollama_generation(bool chat) : chat_(chat), start_(clock_type::now()) {}

bool ollama_generation::parse(const std::string &body, generate_request &greq, api_error &err) {
    const bool ok = chat_ ? parse_ollama_chat(body, greq, opts_, err)
                          : parse_ollama_generate(body, greq, opts_, err);
    if (!ok) return false;
    templated_       = greq.is_chat;
    greq.api         = chat_ ? "ollama.chat" : "ollama.generate";  // journaled (re-attach format)
    greq.client_meta = ollama_client_meta(templated_);  // whether a reader parses the text
    return true;
}

bool ollama_generation::answer_without_session(const generate_request &greq, reply_body &out) {
    if (!opts_.load_only) return false;
    ollama_done done;
    done.reason            = opts_.unload ? "unload" : "load";
    done.with_stats        = false;
    const std::string line = chat_ ? ollama_chat_line(greq.model, {}, &done)
                                   : ollama_generate_line(greq.model, {}, &done);
    out = opts_.stream ? reply_body{line + "\n", "application/x-ndjson"} : reply_body{line};
    return true;
}

api_error ollama_generation::refusal(const start_error &se) const {
    return api_error{ollama_refusal_status(se), "", se.message, se.param, ""};
}

bool ollama_generation::accepted(const session &s, clock_type::time_point at, api_error &err) {
    accepted_ = at;
    if (opts_.num_ctx <= 0) return true;
    // options.num_ctx below the server's context: the prompt must fit in it, and the answer
    // stops when it is full (Ollama's context would hold no more).
    if (s.prompt_tokens() >= opts_.num_ctx) {
        err = bad_request("the prompt is too long: " + std::to_string(s.prompt_tokens()) +
                          " tokens > " + std::to_string(opts_.num_ctx - 1) +
                          " maximum (options.num_ctx)");
        return false;
    }
    limit_ = opts_.num_ctx - s.prompt_tokens();
    return true;
}

std::unique_ptr<stream_encoder> ollama_generation::encoder(const session &s) {
    ollama_stream_meta meta;
    meta.model            = s.model();
    meta.chat             = chat_;
    meta.prompt_tokens    = s.prompt_tokens();
    meta.prompt_token_ids = s.prompt_token_ids();
    meta.limit            = limit_;
    ollama_stream_clock clock;
    clock.start    = start_;
    clock.accepted = accepted_;
    auto parser    = templated_ ? std::make_unique<chat_output_parser>(s.parse_spec(),
                                                                    ollama_tool_call_prefix(s.id()))
                                : nullptr;
    return std::make_unique<ollama_stream_encoder>(std::move(meta), std::move(parser), clock);
}

// As in Ollama, prompt_eval_count counts only the prompt tokens evaluated (the prefix cache
// supplied the rest) and prompt_eval_duration is the time until the first token, which is spent
// on those; `context` (generate) is the whole exchange, to pass back for a follow-up.
reply_body ollama_generation::body(const session &s, const collected_answer &a) {
    const auto now = clock_type::now();
    const bool got = a.first_token != clock_type::time_point{};
    ollama_done d;
    d.reason               = a.fin.reason == finish_reason::LENGTH ? "length" : "stop";
    d.stats.total_ns       = ns_between(start_, now);
    d.stats.load_ns        = ns_between(start_, accepted_);
    d.stats.prompt_eval_ns = ns_between(accepted_, got ? a.first_token : now);
    d.stats.eval_ns        = got ? ns_between(a.first_token, now) : 0;
    d.stats.prompt_eval_count =
        s.prompt_tokens() - std::clamp(a.fin.cached_tokens, 0, s.prompt_tokens());
    d.stats.eval_count = a.fin.completion_tokens;
    std::vector<token_id> context;
    if (!chat_) {
        context = s.prompt_token_ids();
        context.insert(context.end(), a.tokens.begin(), a.tokens.end());
        d.context = &context;
    }
    const ollama_delta all = split_answer(s, a.text, templated_);
    return {chat_ ? ollama_chat_line(s.model(), all, &d)
                  : ollama_generate_line(s.model(), all, &d)};
}

std::unique_ptr<stream_encoder> ollama_reattach_encoder(const session &s) {
    ollama_stream_meta meta;
    meta.model            = s.model();
    meta.chat             = s.api() == "ollama.chat";
    meta.prompt_tokens    = s.prompt_tokens();
    meta.prompt_token_ids = s.prompt_token_ids();
    ollama_stream_clock clock;
    clock.start = clock.accepted = clock.now();
    std::unique_ptr<chat_output_parser> parser;
    if (ollama_templated(s.client_meta()))
        parser =
            std::make_unique<chat_output_parser>(s.parse_spec(), ollama_tool_call_prefix(s.id()));
    return std::make_unique<ollama_stream_encoder>(std::move(meta), std::move(parser), clock);
}

}  // namespace sf
