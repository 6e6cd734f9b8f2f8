#include "protocol/convert.h"

namespace sf::protocol {

pb::Priority to_proto(priority_class c) {
    switch (c) {
        case priority_class::INTERACTIVE:
            return pb::PRIORITY_INTERACTIVE;
        case priority_class::BATCH:
            return pb::PRIORITY_BATCH;
        default:
            return pb::PRIORITY_NORMAL;
    }
}

priority_class from_proto(pb::Priority p) {
    switch (p) {
        case pb::PRIORITY_INTERACTIVE:
            return priority_class::INTERACTIVE;
        case pb::PRIORITY_BATCH:
            return priority_class::BATCH;
        default:
            return priority_class::NORMAL;
    }
}

void to_proto(const sampling_params &s, pb::SamplingParams &out) {
    out.set_temperature(s.temperature);
    out.set_top_k(s.top_k);
    out.set_top_p(s.top_p);
    out.set_min_p(s.min_p);
    out.set_repeat_penalty(s.repeat_penalty);
    out.set_repeat_last_n(s.repeat_last_n);
    out.set_presence_penalty(s.presence_penalty);
    out.set_frequency_penalty(s.frequency_penalty);
    out.set_seed(s.seed);
    out.set_max_tokens(s.max_tokens);
    out.set_ignore_eos(s.ignore_eos);
    out.set_no_speculation(!s.speculative);
    for (const auto &st : s.stop) out.add_stop(st);
}

sampling_params from_proto(const pb::SamplingParams &p) {
    sampling_params s;
    s.temperature       = p.temperature();
    s.top_k             = p.top_k();
    s.top_p             = p.top_p();
    s.min_p             = p.min_p();
    s.repeat_penalty    = p.repeat_penalty();
    s.repeat_last_n     = p.repeat_last_n();
    s.presence_penalty  = p.presence_penalty();
    s.frequency_penalty = p.frequency_penalty();
    s.seed              = p.seed();
    s.max_tokens        = p.max_tokens();
    s.ignore_eos        = p.ignore_eos();
    s.speculative       = !p.no_speculation();
    s.stop.assign(p.stop().begin(), p.stop().end());
    return s;
}

void to_proto(const chat_message &m, pb::ChatMessage &out) {
    out.set_role(m.role);
    out.set_content(m.content);
    out.set_name(m.name);
    out.set_tool_call_id(m.tool_call_id);
    out.set_reasoning_content(m.reasoning_content);
    for (const auto &tc : m.tool_calls) {
        auto *p = out.add_tool_calls();
        p->set_id(tc.id);
        p->set_name(tc.name);
        p->set_arguments(tc.arguments);
    }
}

chat_message from_proto(const pb::ChatMessage &m) {
    chat_message cm{m.role(), m.content(), m.name(), m.tool_call_id(), m.reasoning_content(), {}};
    for (const auto &tc : m.tool_calls())
        cm.tool_calls.push_back({tc.id(), tc.name(), tc.arguments()});
    return cm;
}

void to_proto(const chat_options &o, pb::ChatOptions &out) {
    for (const auto &t : o.tools) {
        auto *p = out.add_tools();
        p->set_name(t.name);
        p->set_description(t.description);
        p->set_parameters(t.parameters);
    }
    switch (o.tool_choice) {
        case tool_choice_mode::NONE:
            out.set_tool_choice("none");
            break;
        case tool_choice_mode::REQUIRED:
            out.set_tool_choice("required");
            break;
        case tool_choice_mode::NAMED:
            out.set_tool_choice("named");
            break;
        default:
            out.set_tool_choice("auto");
    }
    out.set_tool_name(o.tool_name);
    out.set_parallel_tool_calls(o.parallel_tool_calls);
    out.set_json_schema(o.json_schema);
    if (o.reasoning >= 0) out.set_enable_thinking(o.reasoning == 1);
    out.set_reasoning_effort(o.reasoning_effort);
    if (o.reasoning_budget >= 0) out.set_reasoning_budget(o.reasoning_budget);
    for (const auto &[k, v] : o.template_kwargs) (*out.mutable_template_kwargs())[k] = v;
}

chat_options from_proto(const pb::ChatOptions &o) {
    chat_options c;
    for (const auto &t : o.tools()) c.tools.push_back({t.name(), t.description(), t.parameters()});
    const auto &tc        = o.tool_choice();
    c.tool_choice         = tc == "none"       ? tool_choice_mode::NONE
                            : tc == "required" ? tool_choice_mode::REQUIRED
                            : tc == "named"    ? tool_choice_mode::NAMED
                                               : tool_choice_mode::AUTO;
    c.tool_name           = o.tool_name();
    c.parallel_tool_calls = o.parallel_tool_calls();
    c.json_schema         = o.json_schema();
    c.reasoning           = o.has_enable_thinking() ? (o.enable_thinking() ? 1 : 0) : -1;
    c.reasoning_effort    = o.reasoning_effort();
    c.reasoning_budget    = o.has_reasoning_budget() ? o.reasoning_budget() : -1;
    for (const auto &[k, v] : o.template_kwargs()) c.template_kwargs.emplace_back(k, v);
    return c;
}

void to_proto(const chat_parse_spec &p, pb::ChatParse &out) {
    out.set_format(p.format);
    out.set_parser(p.parser);
    out.set_generation_prompt(p.generation_prompt);
    out.set_thinking(p.thinking);
    out.set_parse_tool_calls(p.parse_tool_calls);
}

chat_parse_spec from_proto(const pb::ChatParse &p) {
    return {p.format(), p.parser(), p.generation_prompt(), p.thinking(), p.parse_tool_calls()};
}

static pb::FinishReason to_proto(finish_reason r) {
    switch (r) {
        case finish_reason::STOP:
            return pb::FINISH_STOP;
        case finish_reason::LENGTH:
            return pb::FINISH_LENGTH;
        case finish_reason::CANCELLED:
            return pb::FINISH_CANCELLED;
        default:
            return pb::FINISH_ERROR;
    }
}

static finish_reason from_proto(pb::FinishReason r) {
    switch (r) {
        case pb::FINISH_STOP:
            return finish_reason::STOP;
        case pb::FINISH_LENGTH:
            return finish_reason::LENGTH;
        case pb::FINISH_CANCELLED:
            return finish_reason::CANCELLED;
        default:
            return finish_reason::ERROR;
    }
}

void to_proto(const session_event &ev, const std::string &session_id, uint64_t epoch,
              pb::GenerateEvent &out) {
    if (ev.type == session_event::kind::TOKEN) {
        auto *t = out.mutable_token();
        t->set_session_id(session_id);
        t->set_epoch(epoch);
        t->set_index(ev.index);
        t->set_token_id(ev.token);
        t->set_piece(ev.piece);
        t->set_text(ev.text);
        t->set_cached_tokens(ev.cached_tokens);
        return;
    }
    auto *f = out.mutable_finished();
    f->set_session_id(session_id);
    f->set_epoch(epoch);
    f->set_reason(to_proto(ev.reason));
    f->set_text(ev.text);
    f->set_prompt_tokens(ev.prompt_tokens);
    f->set_completion_tokens(ev.completion_tokens);
    f->set_cached_tokens(ev.cached_tokens);
    f->set_draft_tokens(ev.draft_tokens);
    f->set_draft_accepted(ev.draft_accepted);
    f->set_error(ev.error);
    f->set_stop_string(ev.stop_string);
}

session_event from_proto(const pb::Token &t) {
    session_event ev;
    ev.index         = t.index();
    ev.token         = t.token_id();
    ev.piece         = t.piece();
    ev.text          = t.text();
    ev.cached_tokens = t.cached_tokens();
    return ev;
}

session_event from_proto(const pb::Finished &f) {
    session_event ev;
    ev.type              = session_event::kind::FINISHED;
    ev.reason            = from_proto(f.reason());
    ev.text              = f.text();
    ev.error             = f.error();
    ev.stop_string       = f.stop_string();
    ev.prompt_tokens     = f.prompt_tokens();
    ev.completion_tokens = f.completion_tokens();
    ev.cached_tokens     = f.cached_tokens();
    ev.draft_tokens      = f.draft_tokens();
    ev.draft_accepted    = f.draft_accepted();
    return ev;
}

}  // namespace sf::protocol
