#include "api/ollama/ollama_dialect.h"

#include "api/ollama/ollama_response.h"
#include "api/ollama/ollama_stream_encoder.h"
#include "chat/output_parser.h"

namespace sf {

namespace {

using clock_type = std::chrono::steady_clock;

// The chat layer's parser of a templated request's answer (reasoning, tool calls); null for a
// raw or untemplated one, whose text is all content.
std::unique_ptr<chat_output_parser> answer_parser(const session &s, bool templated) {
    if (!templated) return nullptr;
    return std::make_unique<chat_output_parser>(s.parse_spec(), ollama_tool_call_prefix(s.id()));
}

}  // namespace

ollama_generation::ollama_generation(bool chat) : chat_(chat) {
    clock_.start = clock_.now();
}

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
    clock_.accepted = at;
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
    return std::make_unique<ollama_stream_encoder>(std::move(meta), answer_parser(s, templated_),
                                                   clock_);
}

// The final object's stats as the stream's last line would give them; `context` (generate) is
// the whole exchange, to pass back for a follow-up.
reply_body ollama_generation::body(const session &s, const collected_answer &a) {
    ollama_done d;
    d.reason = a.fin.reason == finish_reason::LENGTH ? "length" : "stop";
    d.stats  = ollama_answer_stats(clock_, a.first_token, s.prompt_tokens(), a.fin.cached_tokens,
                                   ollama_eval_count(a.fin));
    std::vector<token_id> context;
    if (!chat_) {
        context = s.prompt_token_ids();
        context.insert(context.end(), a.tokens.begin(), a.tokens.end());
        d.context = &context;
    }
    const ollama_delta all = ollama_split(answer_parser(s, templated_).get(), a.text, true);
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
    return std::make_unique<ollama_stream_encoder>(
        std::move(meta), answer_parser(s, ollama_templated(s.client_meta())), clock);
}

}  // namespace sf
