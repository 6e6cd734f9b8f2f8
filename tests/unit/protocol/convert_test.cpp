// The worker protocol's conversions (protocol/convert.h) both ways: every internal type the
// head and the worker exchange comes back equal after to_proto, the wire bytes and from_proto,
// so the two sides of a Submit, a Render, an event, a Health or an Embed cannot disagree about
// a field (issue #39: "the worker using protocol/ conversions only, with a round-trip test").
#include <gtest/gtest.h>

#include <algorithm>

#include "protocol/convert.h"
#include "protocol/request_codec.h"

namespace sf {
namespace {

namespace pb = protocol::pb;

// Through the wire bytes too, as gRPC carries the message.
template <class Msg>
Msg over_wire(const Msg &m) {
    Msg back;
    EXPECT_TRUE(back.ParseFromString(m.SerializeAsString()));
    return back;
}

generate_request chat_request() {
    generate_request r;
    r.is_chat                    = true;
    r.messages                   = {{"system", "be brief", "", "", "", {}},
                                    {"user", "hi \xE2\x9C\x93", "ann", "", "", {}},
                                    {"assistant", "", "", "", "thinking", {{"call_1", "ls", R"({"dir":"/"})"}}},
                                    {"tool", "a b", "", "call_1", "", {}}};
    r.chat.tools                 = {{"ls", "list a folder", R"({"type":"object"})"}};
    r.chat.tool_choice           = tool_choice_mode::NAMED;
    r.chat.tool_name             = "ls";
    r.chat.parallel_tool_calls   = false;
    r.chat.json_schema           = R"({"type":"string"})";
    r.chat.reasoning             = 0;
    r.chat.reasoning_effort      = "low";
    r.chat.reasoning_budget      = 64;
    r.chat.template_kwargs       = {{"a", "1"}, {"b", "\"x\""}};
    r.sampling.temperature       = 0.25f;
    r.sampling.top_k             = 7;
    r.sampling.top_p             = 0.5f;
    r.sampling.min_p             = 0.125f;
    r.sampling.repeat_penalty    = 1.5f;
    r.sampling.repeat_last_n     = 32;
    r.sampling.presence_penalty  = 0.75f;
    r.sampling.frequency_penalty = -0.5f;
    r.sampling.seed              = 0xFEEDFACECAFEBEEFull;
    r.sampling.max_tokens        = 123;
    r.sampling.stop              = {"\n\n", "END"};
    r.sampling.ignore_eos        = true;
    r.sampling.speculative       = false;
    r.has_seed                   = true;  // from_proto's: a placement always carries its seed
    r.cls                        = priority_class::BATCH;
    r.prefix_tokens              = {1, 2, 3};
    r.want_prompt_tokens         = true;
    r.client_meta                = R"({"stop":["x"]})";
    r.client                     = "key:abc";
    r.cache_scope                = "scope-1";
    r.retry_key                  = "rk";
    return r;
}

worker_submission submission(generate_request r) {
    worker_submission s;
    s.session_id    = "sess_0123";
    s.epoch         = 42;
    s.request       = std::move(r);
    s.resume_tokens = {9, 8, 7};
    s.has_parse     = true;
    s.parse         = {5, "peg-bytes", "<think>\n", true, true};
    return s;
}

// The map field (template kwargs) has no order on the wire: compare sorted.
worker_submission sorted(worker_submission s) {
    auto &kw = s.request.chat.template_kwargs;
    std::sort(kw.begin(), kw.end());
    return s;
}

TEST(ProtocolConvert, ChatSubmissionRoundTrips) {
    const worker_submission sub = submission(chat_request());
    pb::GenerateRequest msg;
    protocol::to_proto(sub, msg);
    EXPECT_EQ(sorted(protocol::from_proto(over_wire(msg))), sorted(sub));
}

TEST(ProtocolConvert, TextSubmissionRoundTrips) {
    generate_request r = chat_request();
    r.is_chat          = false;
    r.messages.clear();
    r.chat                = {};
    r.prompt              = "Once upon a time";
    worker_submission sub = submission(r);
    sub.has_parse         = false;
    sub.parse             = {};
    pb::GenerateRequest msg;
    protocol::to_proto(sub, msg);
    EXPECT_EQ(protocol::from_proto(over_wire(msg)), sub);
}

TEST(ProtocolConvert, JournalCodecKeepsTheSubmission) {
    const worker_submission sub = submission(chat_request());
    worker_submission back;
    ASSERT_TRUE(protocol::decode_submission(protocol::encode_submission(sub), back));
    EXPECT_EQ(sorted(back), sorted(sub));
    EXPECT_FALSE(protocol::decode_submission("\xff\xff\xff", back));
}

TEST(ProtocolConvert, EveryPriorityClassRoundTripsAndUnsetReadsNormal) {
    for (int i = 0; i < k_classes; ++i) {
        const auto c = static_cast<priority_class>(i);
        EXPECT_EQ(protocol::from_proto(protocol::to_proto(c)), c) << class_name(c);
    }
    EXPECT_EQ(protocol::from_proto(pb::GenerateRequest{}.priority()), priority_class::NORMAL);
}

TEST(ProtocolConvert, EveryRefusalKindRoundTrips) {
    using k = start_error::kind;
    for (k kind :
         {k::INVALID_REQUEST, k::CONTEXT_LENGTH, k::UNAVAILABLE, k::OVERLOADED, k::INTERNAL}) {
        const start_error e{kind, "why", "messages"};
        pb::SubmitReply reply;
        protocol::to_proto(e, *reply.mutable_rejected());
        const pb::SubmitReply back = over_wire(reply);
        ASSERT_TRUE(back.has_rejected());
        EXPECT_EQ(protocol::from_proto(back.rejected()), e);
    }
    pb::Rejected unset;
    EXPECT_EQ(protocol::from_proto(unset).type, k::INTERNAL);
}

TEST(ProtocolConvert, AcceptanceRoundTrips) {
    accepted_session a;
    a.prompt_tokens    = 31;
    a.cached_tokens    = 16;
    a.n_ctx            = 8192;
    a.has_parse        = true;
    a.parse            = {3, "p", "", false, true};
    a.prompt_token_ids = {1, 5, 9};
    a.stream           = 77;
    pb::SubmitReply reply;
    protocol::to_proto(a, *reply.mutable_accepted());
    EXPECT_EQ(protocol::from_proto(over_wire(reply).accepted()), a);
}

TEST(ProtocolConvert, TokenAndFinishEventsRoundTrip) {
    session_event tok;
    tok.index         = 5;
    tok.token         = 1234;
    tok.piece         = std::string("\xE2\x9C", 2);  // part of a code point
    tok.text          = "";
    tok.cached_tokens = 0;
    pb::GenerateEvent msg;
    protocol::to_proto(tok, "sess_1", 3, msg);
    const pb::GenerateEvent back = over_wire(msg);
    ASSERT_TRUE(back.has_token());
    EXPECT_EQ(back.token().session_id(), "sess_1");
    EXPECT_EQ(back.token().epoch(), 3u);
    EXPECT_EQ(protocol::from_proto(back.token()), tok);

    for (finish_reason r : {finish_reason::STOP, finish_reason::LENGTH, finish_reason::CANCELLED,
                            finish_reason::ERROR}) {
        session_event fin;
        fin.type              = session_event::kind::FINISHED;
        fin.reason            = r;
        fin.text              = "tail";
        fin.stop_string       = "END";
        fin.error             = r == finish_reason::ERROR ? "boom" : "";
        fin.prompt_tokens     = 10;
        fin.completion_tokens = 20;
        fin.cached_tokens     = 4;
        fin.draft_tokens      = 6;
        fin.draft_accepted    = 5;
        pb::GenerateEvent m;
        protocol::to_proto(fin, "sess_2", 9, m);
        const pb::GenerateEvent b = over_wire(m);
        ASSERT_TRUE(b.has_finished());
        EXPECT_EQ(b.finished().session_id(), "sess_2");
        EXPECT_EQ(b.finished().epoch(), 9u);
        EXPECT_EQ(protocol::from_proto(b.finished()), fin);
    }
}

TEST(ProtocolConvert, HealthRoundTrips) {
    worker_status s;
    s.ready                   = true;
    s.model_path              = "/m/x.gguf";
    s.model_name              = "x";
    s.n_ctx                   = 4096;
    s.n_parallel              = 8;
    s.active_sequences        = 3;
    s.waiting_sessions        = 2;
    s.ticks                   = 100;
    s.batched_ticks           = 60;
    s.interrupted_ticks       = 4;
    s.max_sequences_per_tick  = 8;
    s.last_sequences_per_tick = 5;
    s.prompt_tokens_total     = 1000;
    s.generated_tokens_total  = 2000;
    s.pid                     = 4321;
    for (int i = 0; i < k_classes; ++i)
        s.classes.push_back({k_class_names[i], i + 1, i + 2, uint64_t(i + 3)});
    s.preemptions          = 7;
    s.kv_used_cells        = 512;
    s.kv_total_cells       = 32768;
    s.kv_bytes_per_token   = 114688;
    s.cache_type_k         = "f16";
    s.cache_type_v         = "q8_0";
    s.parked_bytes         = 1 << 20;
    s.spec_drafted_tokens  = 11;
    s.spec_accepted_tokens = 9;
    s.cache.lookups        = 12;
    s.cache.hits           = 10;
    s.cache.prompt_tokens  = 500;
    s.cache.cached_tokens  = 400;
    s.cache.ram_bytes      = 1 << 22;
    s.cache.entries        = 3;
    s.cache.disk_corrupt   = 1;
    pb::HealthReply msg;
    protocol::to_proto(s, msg);
    EXPECT_EQ(protocol::from_proto(over_wire(msg)), s);
}

TEST(ProtocolConvert, ModelFactsAndEmbedBatchRoundTrip) {
    model_description m;
    m.metadata              = {{"general.name", "tiny"}, {"qwen3.context_length", "40960"}};
    m.chat_template         = "{{ messages }}";
    m.n_params              = 42000000;
    m.size_bytes            = 84000000;
    m.n_embd                = 256;
    m.n_ctx_train           = 40960;
    m.architecture          = "qwen3";
    m.file_type             = "F16";
    m.description           = "tiny";
    m.tokenizer_fingerprint = "ab";
    m.engine                = "llama.cpp b1-de3ff81";
    m.model_fingerprint     = "cd";
    m.vision                = true;  // a projector that reads images, none for audio
    pb::ModelInfoReply mi;
    protocol::to_proto(m, mi);
    EXPECT_EQ(protocol::from_proto(over_wire(mi)), m);

    embed_batch j;
    j.inputs   = {{true, "hello", {}}, {false, "", {1, 2, 3}}};
    j.truncate = true;
    pb::EmbedRequest er;
    protocol::to_proto(j, er);
    EXPECT_EQ(protocol::from_proto(over_wire(er)), j);
}

}  // namespace
}  // namespace sf
