// Conversions of the worker protocol's request and report messages (convert.h).
#include "protocol/convert.h"

namespace sf::protocol {

void to_proto(const worker_submission &s, pb::GenerateRequest &out) {
    const generate_request &req = s.request;
    out.set_session_id(s.session_id);
    out.set_epoch(s.epoch);
    if (req.is_chat) {
        auto *chat = out.mutable_chat();
        chat->set_add_generation_prompt(true);
        for (const auto &m : req.messages) to_proto(m, *chat->add_messages());
        to_proto(req.chat, *chat->mutable_options());
    } else {
        out.set_prompt(req.prompt);
    }
    to_proto(req.sampling, *out.mutable_sampling());
    out.set_priority(to_proto(req.cls));
    out.set_client(req.client);
    for (token_id t : req.prefix_tokens) out.add_prefix_tokens(t);
    out.set_want_prompt_tokens(req.want_prompt_tokens);
    out.set_client_meta(req.client_meta);
    out.set_retry_key(req.retry_key);
    out.set_cache_scope(req.cache_scope);
    for (token_id t : s.resume_tokens) out.add_resume_tokens(t);
    if (s.has_parse) to_proto(s.parse, *out.mutable_journaled_parse());
}

worker_submission from_proto(const pb::GenerateRequest &r) {
    worker_submission s;
    s.session_id          = r.session_id();
    s.epoch               = r.epoch();
    generate_request &req = s.request;
    req.is_chat           = r.has_chat();
    if (r.has_chat()) {
        for (const auto &m : r.chat().messages()) req.messages.push_back(from_proto(m));
        req.chat = from_proto(r.chat().options());
    } else {
        req.prompt = r.prompt();
    }
    req.sampling = from_proto(r.sampling());
    req.has_seed = true;
    req.cls      = from_proto(r.priority());
    req.client   = r.client();
    req.prefix_tokens.assign(r.prefix_tokens().begin(), r.prefix_tokens().end());
    req.want_prompt_tokens = r.want_prompt_tokens();
    req.client_meta        = r.client_meta();
    req.retry_key          = r.retry_key();
    req.cache_scope        = r.cache_scope();
    s.resume_tokens.assign(r.resume_tokens().begin(), r.resume_tokens().end());
    s.has_parse = r.has_journaled_parse();
    if (s.has_parse) s.parse = from_proto(r.journaled_parse());
    return s;
}

void to_proto(const accepted_session &a, pb::Accepted &out) {
    out.set_prompt_tokens(a.prompt_tokens);
    out.set_cached_tokens(a.cached_tokens);
    out.set_n_ctx(a.n_ctx);
    if (a.has_parse) to_proto(a.parse, *out.mutable_parse());
    for (token_id t : a.prompt_token_ids) out.add_prompt_token_ids(t);
    out.set_events_stream_id(a.stream);
}

accepted_session from_proto(const pb::Accepted &a) {
    accepted_session acc;
    acc.prompt_tokens = a.prompt_tokens();
    acc.cached_tokens = a.cached_tokens();
    acc.n_ctx         = a.n_ctx();
    acc.has_parse     = a.has_parse();
    if (a.has_parse()) acc.parse = from_proto(a.parse());
    acc.prompt_token_ids.assign(a.prompt_token_ids().begin(), a.prompt_token_ids().end());
    acc.stream = a.events_stream_id();
    return acc;
}

void to_proto(const start_error &e, pb::Rejected &out) {
    using k = start_error::kind;
    switch (e.type) {
        case k::INVALID_REQUEST:
            out.set_code(pb::REJECT_INVALID_REQUEST);
            break;
        case k::CONTEXT_LENGTH:
            out.set_code(pb::REJECT_CONTEXT_LENGTH);
            break;
        case k::UNAVAILABLE:
            out.set_code(pb::REJECT_UNAVAILABLE);
            break;
        case k::OVERLOADED:
            out.set_code(pb::REJECT_OVERLOADED);
            break;
        case k::INTERNAL:
            out.set_code(pb::REJECT_INTERNAL);
            break;
    }
    out.set_message(e.message);
    out.set_param(e.param);
}

start_error from_proto(const pb::Rejected &r) {
    using k = start_error::kind;
    start_error e;
    switch (r.code()) {
        case pb::REJECT_INVALID_REQUEST:
            e.type = k::INVALID_REQUEST;
            break;
        case pb::REJECT_CONTEXT_LENGTH:
            e.type = k::CONTEXT_LENGTH;
            break;
        case pb::REJECT_UNAVAILABLE:
            e.type = k::UNAVAILABLE;
            break;
        case pb::REJECT_OVERLOADED:
            e.type = k::OVERLOADED;
            break;
        default:
            e.type = k::INTERNAL;
    }
    e.message = r.message();
    e.param   = r.param();
    return e;
}

void to_proto(const worker_status &s, pb::HealthReply &out) {
    out.set_ready(s.ready);
    out.set_model_path(s.model_path);
    out.set_model_name(s.model_name);
    out.set_n_ctx(s.n_ctx);
    out.set_n_parallel(s.n_parallel);
    out.set_active_sequences(s.active_sequences);
    out.set_waiting_sessions(s.waiting_sessions);
    out.set_ticks(s.ticks);
    out.set_batched_ticks(s.batched_ticks);
    out.set_interrupted_ticks(s.interrupted_ticks);
    out.set_max_sequences_per_tick(s.max_sequences_per_tick);
    out.set_last_sequences_per_tick(s.last_sequences_per_tick);
    out.set_prompt_tokens_total(s.prompt_tokens_total);
    out.set_generated_tokens_total(s.generated_tokens_total);
    out.set_pid(s.pid);
    out.set_preemptions(s.preemptions);
    out.set_kv_used_cells(s.kv_used_cells);
    out.set_kv_total_cells(s.kv_total_cells);
    out.set_kv_bytes_per_token(s.kv_bytes_per_token);
    out.set_cache_type_k(s.cache_type_k);
    out.set_cache_type_v(s.cache_type_v);
    out.set_parked_bytes(s.parked_bytes);
    out.set_spec_drafted_tokens(s.spec_drafted_tokens);
    out.set_spec_accepted_tokens(s.spec_accepted_tokens);
    for (const auto &c : s.classes) {
        auto *pc = out.add_classes();
        pc->set_name(c.name);
        pc->set_running(c.running);
        pc->set_waiting(c.waiting);
        pc->set_preemptions(c.preemptions);
    }
    auto *c = out.mutable_cache();
    c->set_lookups(s.cache.lookups);
    c->set_hits(s.cache.hits);
    c->set_prompt_tokens(s.cache.prompt_tokens);
    c->set_cached_tokens(s.cache.cached_tokens);
    c->set_ram_bytes(s.cache.ram_bytes);
    c->set_ram_budget_bytes(s.cache.ram_budget_bytes);
    c->set_entries(s.cache.entries);
    c->set_evictions(s.cache.evictions);
    c->set_disk_bytes(s.cache.disk_bytes);
    c->set_disk_entries(s.cache.disk_entries);
    c->set_disk_writes(s.cache.disk_writes);
    c->set_disk_loads(s.cache.disk_loads);
    c->set_disk_corrupt(s.cache.disk_corrupt);
}

worker_status from_proto(const pb::HealthReply &r) {
    worker_status s;
    s.ready                   = r.ready();
    s.model_path              = r.model_path();
    s.model_name              = r.model_name();
    s.n_ctx                   = r.n_ctx();
    s.n_parallel              = r.n_parallel();
    s.active_sequences        = r.active_sequences();
    s.waiting_sessions        = r.waiting_sessions();
    s.ticks                   = r.ticks();
    s.batched_ticks           = r.batched_ticks();
    s.interrupted_ticks       = r.interrupted_ticks();
    s.max_sequences_per_tick  = r.max_sequences_per_tick();
    s.last_sequences_per_tick = r.last_sequences_per_tick();
    s.prompt_tokens_total     = r.prompt_tokens_total();
    s.generated_tokens_total  = r.generated_tokens_total();
    s.pid                     = r.pid();
    s.preemptions             = r.preemptions();
    s.kv_used_cells           = r.kv_used_cells();
    s.kv_total_cells          = r.kv_total_cells();
    s.kv_bytes_per_token      = r.kv_bytes_per_token();
    s.cache_type_k            = r.cache_type_k();
    s.cache_type_v            = r.cache_type_v();
    s.parked_bytes            = r.parked_bytes();
    s.spec_drafted_tokens     = r.spec_drafted_tokens();
    s.spec_accepted_tokens    = r.spec_accepted_tokens();
    for (const auto &c : r.classes())
        s.classes.push_back({c.name(), c.running(), c.waiting(), c.preemptions()});
    const auto &c            = r.cache();
    s.cache.lookups          = c.lookups();
    s.cache.hits             = c.hits();
    s.cache.prompt_tokens    = c.prompt_tokens();
    s.cache.cached_tokens    = c.cached_tokens();
    s.cache.ram_bytes        = c.ram_bytes();
    s.cache.ram_budget_bytes = c.ram_budget_bytes();
    s.cache.entries          = c.entries();
    s.cache.evictions        = c.evictions();
    s.cache.disk_bytes       = c.disk_bytes();
    s.cache.disk_entries     = c.disk_entries();
    s.cache.disk_writes      = c.disk_writes();
    s.cache.disk_loads       = c.disk_loads();
    s.cache.disk_corrupt     = c.disk_corrupt();
    return s;
}

void to_proto(const model_description &m, pb::ModelInfoReply &out) {
    for (const auto &[k, v] : m.metadata) (*out.mutable_metadata())[k] = v;
    out.set_chat_template(m.chat_template);
    out.set_n_params(m.n_params);
    out.set_size_bytes(m.size_bytes);
    out.set_n_embd(m.n_embd);
    out.set_n_ctx_train(m.n_ctx_train);
    out.set_architecture(m.architecture);
    out.set_file_type(m.file_type);
    out.set_description(m.description);
    out.set_tokenizer_fingerprint(m.tokenizer_fingerprint);
    out.set_model_fingerprint(m.model_fingerprint);
    out.set_engine(m.engine);
    out.set_devices(m.devices);
    out.set_gpu_layers(m.gpu_layers);
    out.set_n_layers(m.n_layers);
    out.set_vision(m.vision);
    out.set_audio(m.audio);
}

model_description from_proto(const pb::ModelInfoReply &r) {
    model_description m;
    m.metadata.insert(r.metadata().begin(), r.metadata().end());
    m.chat_template         = r.chat_template();
    m.n_params              = r.n_params();
    m.size_bytes            = r.size_bytes();
    m.n_embd                = r.n_embd();
    m.n_ctx_train           = r.n_ctx_train();
    m.architecture          = r.architecture();
    m.file_type             = r.file_type();
    m.description           = r.description();
    m.tokenizer_fingerprint = r.tokenizer_fingerprint();
    m.model_fingerprint     = r.model_fingerprint();
    m.engine                = r.engine();
    m.devices               = r.devices();
    m.gpu_layers            = r.gpu_layers();
    m.n_layers              = r.n_layers();
    m.vision                = r.vision();
    m.audio                 = r.audio();
    return m;
}

void to_proto(const embed_batch &j, pb::EmbedRequest &out) {
    out.set_truncate(j.truncate);
    for (const auto &in : j.inputs) {
        auto *e = out.add_inputs();
        if (in.is_text) {
            e->set_text(in.text);
        } else {
            e->mutable_tokens()->mutable_ids()->Add(in.tokens.begin(), in.tokens.end());
        }
    }
}

embed_batch from_proto(const pb::EmbedRequest &r) {
    embed_batch j;
    j.truncate = r.truncate();
    for (const auto &in : r.inputs()) {
        embed_input e;
        e.is_text = in.has_text() || !in.has_tokens();
        if (in.has_text()) e.text = in.text();
        if (in.has_tokens()) e.tokens.assign(in.tokens().ids().begin(), in.tokens().ids().end());
        j.inputs.push_back(std::move(e));
    }
    return j;
}

}  // namespace sf::protocol
