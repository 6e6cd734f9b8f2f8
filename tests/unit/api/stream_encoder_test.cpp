// Unit tests of the stream encoders (api/common/stream_encoder.h), events in, bytes out, no server:
// each dialect's framing, ids and end; and the property re-attach rests on, for every cursor:
// what a reader that re-attaches after token k-1 gets is exactly the rest of the uninterrupted
// stream after the frame that carries id "<session>:<k-1>".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>

#include "api/anthropic/anthropic_stream_encoder.h"
#include "api/ollama/ollama_stream_encoder.h"
#include "api/openai/openai_stream.h"
#include "api/responses/responses_stream_encoder.h"

using namespace sf;
using json = nlohmann::json;

namespace {

const std::string k_session = "sess-0123456789abcdef";

std::string id_of(size_t i) {
    return k_session + ":" + std::to_string(i);
}

std::vector<session_event> tokens(const std::vector<std::string> &texts) {
    std::vector<session_event> out;
    for (size_t i = 0; i < texts.size(); ++i) {
        session_event e;
        e.index         = static_cast<uint32_t>(i);
        e.token         = static_cast<token_id>(100 + i);
        e.text          = texts[i];
        e.cached_tokens = i == 0 ? 7 : 0;
        out.push_back(e);
    }
    return out;
}

session_event end(finish_reason r, int32_t n, std::string tail = "") {
    session_event f;
    f.type              = session_event::kind::FINISHED;
    f.reason            = r;
    f.text              = std::move(tail);
    f.completion_tokens = n;
    f.prompt_tokens     = 12;
    f.cached_tokens     = 7;
    return f;
}

using factory = std::function<std::unique_ptr<stream_encoder>()>;

// A reader from token `cursor` on, as the driver (http/stream_driver.cpp) runs the encoder.
std::string read_from(const factory &make, const std::vector<session_event> &toks,
                      const session_event &fin, size_t cursor) {
    auto enc = make();
    for (size_t i = 0; i < cursor && i < toks.size(); ++i) enc->skip(toks[i]);
    std::string out = enc->open(cursor > 0);
    for (size_t i = cursor; i < toks.size(); ++i) out += enc->token(toks[i], id_of(i));
    const auto final_index = static_cast<size_t>(fin.completion_tokens);
    out += cursor > final_index ? enc->after_end() : enc->finish(fin, id_of(final_index));
    return out;
}

// Every re-attach point a client can hold (an id the full stream carried) gives the full
// stream's rest after that frame.
void expect_reattach_equals_suffix(const factory &make, const std::vector<session_event> &toks,
                                   const session_event &fin) {
    const std::string full = read_from(make, toks, fin, 0);
    int ids                = 0;
    for (size_t k = 1; k <= toks.size() + 1; ++k) {
        const std::string marker = "id: " + id_of(k - 1) + "\n";
        const auto at            = full.find(marker);
        if (at == std::string::npos) continue;  // no frame carried that id: not a cursor
        ++ids;
        const auto frame_end = full.find("\n\n", at);
        ASSERT_NE(frame_end, std::string::npos);
        EXPECT_EQ(read_from(make, toks, fin, k), full.substr(frame_end + 2)) << "cursor " << k;
    }
    EXPECT_GE(ids, static_cast<int>(toks.size())) << full;
}

// The JSON of every `data:` line that is JSON.
std::vector<json> data_of(const std::string &stream) {
    std::vector<json> out;
    size_t p = 0;
    while ((p = stream.find("data: ", p)) != std::string::npos) {
        const auto e = stream.find('\n', p);
        auto j       = json::parse(stream.substr(p + 6, e - p - 6), nullptr, false);
        if (!j.is_discarded()) out.push_back(j);
        p = e;
    }
    return out;
}

openai_meta meta() {
    openai_meta m;
    m.id            = "chatcmpl-" + k_session;
    m.model         = "m";
    m.created       = 1;
    m.prompt_tokens = 12;
    return m;
}

}  // namespace

TEST(OpenAIStreamEncoder, ChatChunksThenFinishUsageAndDone) {
    const auto toks = tokens({"Hel", "lo", "", " world"});
    factory make    = [] {
        return std::make_unique<openai_stream_encoder>(
            meta(), std::make_unique<chat_output_parser>(chat_parse_spec{}, "call_"), true);
    };
    const std::string s = read_from(make, toks, end(finish_reason::LENGTH, 4, "!"), 0);
    auto d              = data_of(s);
    ASSERT_GE(d.size(), 4u) << s;
    EXPECT_EQ(d.front()["choices"][0]["delta"]["role"], "assistant");
    std::string text;
    for (const auto &j : d)
        if (!j["choices"].empty() && j["choices"][0]["delta"].contains("content"))
            text += j["choices"][0]["delta"]["content"].get<std::string>();
    EXPECT_EQ(text, "Hello world!");
    EXPECT_EQ(d[d.size() - 2]["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(d.back()["usage"]["completion_tokens"], 4);
    EXPECT_EQ(d.back()["usage"]["prompt_tokens"], 12);
    EXPECT_EQ(s.substr(s.size() - 14), "data: [DONE]\n\n");
    EXPECT_EQ(s.find("id: " + id_of(2)), std::string::npos) << "a token with no text has no frame";
    EXPECT_NE(s.find("id: " + id_of(4)), std::string::npos) << "the final chunk's id";
    expect_reattach_equals_suffix(make, toks, end(finish_reason::LENGTH, 4, "!"));
}

TEST(OpenAIStreamEncoder, CompletionChunksAndAnErrorInBand) {
    const auto toks = tokens({"a", "b", "c"});
    factory make = [] { return std::make_unique<openai_stream_encoder>(meta(), nullptr, false); };
    const std::string s = read_from(make, toks, end(finish_reason::STOP, 3), 0);
    auto d              = data_of(s);
    ASSERT_EQ(d.size(), 4u) << s;
    EXPECT_EQ(d[0]["object"], "text_completion");
    EXPECT_EQ(d[1]["choices"][0]["text"], "b");
    EXPECT_EQ(d[3]["choices"][0]["finish_reason"], "stop");
    expect_reattach_equals_suffix(make, toks, end(finish_reason::STOP, 3));
    // An engine failure after the headers: one error body, then [DONE].
    auto failed         = end(finish_reason::ERROR, 3);
    failed.error        = "decode failed";
    const std::string f = read_from(make, toks, failed, 0);
    auto fd             = data_of(f);
    EXPECT_EQ(fd.back()["error"]["message"], "decode failed");
    EXPECT_EQ(f.substr(f.size() - 14), "data: [DONE]\n\n");
}

TEST(AnthropicStreamEncoder, TypedEventsWithIdsAndTheStopSequence) {
    const auto toks = tokens({"The ", "sea", " is"});
    factory make    = [] {
        return std::make_unique<anthropic_stream_encoder>(
            anthropic_meta{"msg_1", "m", 12, 0, 0},
            std::make_unique<chat_output_parser>(chat_parse_spec{}, "toolu_"),
            std::vector<std::string>{"END"}, false);
    };
    auto fin            = end(finish_reason::STOP, 3);
    fin.stop_string     = "END";
    const std::string s = read_from(make, toks, fin, 0);
    std::vector<std::string> names;
    for (size_t p = 0; (p = s.find("event: ", p)) != std::string::npos; ++p)
        names.push_back(s.substr(p + 7, s.find('\n', p) - p - 7));
    ASSERT_GE(names.size(), 6u) << s;
    EXPECT_EQ(names.front(), "message_start");
    EXPECT_EQ(names[names.size() - 2], "message_delta");
    EXPECT_EQ(names.back(), "message_stop");
    std::string text;
    json delta;
    for (const auto &j : data_of(s)) {
        if (j["type"] == "content_block_delta") text += j["delta"]["text"].get<std::string>();
        if (j["type"] == "message_delta") delta = j;
        if (j["type"] == "message_start")
            EXPECT_EQ(j["message"]["usage"]["cache_read_input_tokens"], 7);
    }
    EXPECT_EQ(text, "The sea is");
    EXPECT_EQ(delta["delta"]["stop_reason"], "stop_sequence");
    EXPECT_EQ(delta["delta"]["stop_sequence"], "END");
    EXPECT_EQ(delta["usage"]["output_tokens"], 3);
    expect_reattach_equals_suffix(make, toks, fin);
}

TEST(AnthropicStreamEncoder, ALongPrefillGetsMessageStartThenPingsAndAFailureAnErrorEvent) {
    anthropic_stream_encoder enc(anthropic_meta{"msg_1", "m", 12, 0, 0},
                                 std::make_unique<chat_output_parser>(chat_parse_spec{}, "toolu_"),
                                 {}, true);
    EXPECT_EQ(enc.open(false), "");
    EXPECT_EQ(enc.idle().rfind("event: message_start\n", 0), 0u);
    EXPECT_EQ(enc.idle(), "event: ping\ndata: {\"type\":\"ping\"}\n\n");
    auto fin            = end(finish_reason::CANCELLED, 0);
    fin.error           = "the server is shutting down";
    const std::string s = enc.finish(fin, id_of(0));
    auto d              = data_of(s);
    ASSERT_FALSE(d.empty()) << s;
    EXPECT_EQ(d.back()["type"], "error");
    EXPECT_EQ(d.back()["error"]["type"], "overloaded_error") << s;  // 503 while shutting down
}

TEST(AnthropicStreamEncoder, StopSequencesTravelInTheJournaledClientMeta) {
    EXPECT_EQ(anthropic_client_meta({}), "");
    EXPECT_EQ(anthropic_stop_sequences(anthropic_client_meta({"a", "\n\nHuman:"})),
              (std::vector<std::string>{"a", "\n\nHuman:"}));
    EXPECT_TRUE(anthropic_stop_sequences("not json").empty());
    EXPECT_TRUE(anthropic_stop_sequences(R"({"stop_sequences":"x"})").empty());
}

namespace {

std::unique_ptr<responses_stream_encoder> responses_enc(int64_t skip_through = -1) {
    responses_meta m;
    m.id            = "resp_" + k_session;
    m.model         = "m";
    m.created       = 1;
    m.prompt_tokens = 12;
    return std::make_unique<responses_stream_encoder>(
        std::move(m), std::make_unique<chat_output_parser>(chat_parse_spec{}, "call_"),
        skip_through);
}

// The stream's frames, each with its blank line.
std::vector<std::string> frames_of(const std::string &stream) {
    std::vector<std::string> out;
    for (size_t p = 0, e; (e = stream.find("\n\n", p)) != std::string::npos; p = e + 2)
        out.push_back(stream.substr(p, e + 2 - p));
    return out;
}

}  // namespace

TEST(ResponsesStreamEncoder, TypedEventsInOrderWithSequenceNumbersIdsAndUsage) {
    const auto toks     = tokens({"Hel", "lo", "", " world"});
    factory make        = [] { return responses_enc(); };
    const auto fin      = end(finish_reason::STOP, 4, "!");
    const std::string s = read_from(make, toks, fin, 0);
    const auto d        = data_of(s);
    ASSERT_GE(d.size(), 8u) << s;
    EXPECT_EQ(d[0]["type"], "response.created");
    EXPECT_EQ(d[1]["type"], "response.in_progress");
    EXPECT_EQ(d.back()["type"], "response.completed");
    EXPECT_EQ(d.back()["response"]["usage"]["input_tokens"], 12);
    EXPECT_EQ(d.back()["response"]["usage"]["output_tokens"], 4);
    EXPECT_EQ(d.back()["response"]["usage"]["input_tokens_details"]["cached_tokens"], 7);
    std::string text;
    for (size_t i = 0; i < d.size(); ++i) {
        EXPECT_EQ(d[i]["sequence_number"], i) << s;
        if (d[i]["type"] == "response.output_text.delta") text += d[i]["delta"].get<std::string>();
    }
    EXPECT_EQ(text, "Hello world!");
    EXPECT_EQ(s.find("id: " + id_of(2)), std::string::npos) << "a token with no text has no frame";
    EXPECT_NE(s.find("id: " + id_of(4) + "\nevent: response.completed"), std::string::npos)
        << "the end's id is on the terminal event";
    expect_reattach_equals_suffix(make, toks, fin);
}

TEST(ResponsesStreamEncoder, StartingAfterASequenceNumberGivesTheRestOfTheStream) {
    const auto toks = tokens({"a", "b", "c"});
    const auto fin  = end(finish_reason::LENGTH, 3);
    const auto full = frames_of(read_from([] { return responses_enc(); }, toks, fin, 0));
    for (size_t k = 0; k < full.size(); ++k) {
        const std::string rest =
            read_from([k] { return responses_enc(static_cast<int64_t>(k)); }, toks, fin, 0);
        std::string expected;
        for (size_t i = k + 1; i < full.size(); ++i) expected += full[i];
        EXPECT_EQ(rest, expected) << "starting_after " << k;
    }
    EXPECT_EQ(data_of(full.back()).front()["type"], "response.incomplete");
}

namespace {

// A fixed clock: arrival at 0, accepted at 1 ms, each reading 1 ms later than the last.
ollama_stream_clock fake_clock() {
    auto t = std::make_shared<std::chrono::steady_clock::time_point>();
    ollama_stream_clock c;
    c.start    = *t;
    c.accepted = *t + std::chrono::milliseconds(1);
    c.now      = [t] { return *t += std::chrono::milliseconds(1); };
    return c;
}

std::unique_ptr<stream_encoder> ollama_enc(bool chat, int64_t limit = INT64_MAX) {
    ollama_stream_meta m;
    m.model            = "tiny";
    m.chat             = chat;
    m.prompt_tokens    = 12;
    m.prompt_token_ids = {1, 2, 3};
    m.limit            = limit;
    return std::make_unique<ollama_stream_encoder>(std::move(m), nullptr, fake_clock());
}

std::vector<json> ndjson(const std::string &s) {
    std::vector<json> out;
    size_t at = 0;
    for (size_t nl; (nl = s.find('\n', at)) != std::string::npos; at = nl + 1)
        out.push_back(json::parse(s.substr(at, nl - at)));
    EXPECT_EQ(at, s.size()) << "every line ends with a newline";
    // What differs between two readings of one session: the wall time and the durations.
    for (auto &j : out)
        for (const char *k : {"created_at", "total_duration", "load_duration",
                              "prompt_eval_duration", "eval_duration"})
            j.erase(k);
    return out;
}

}  // namespace

TEST(OllamaStreamEncoder, OneLinePerTokenThenTheDoneLineWithCounters) {
    const auto toks = tokens({"Hel", "lo", "", " there"});
    const auto gen  = ndjson(
         read_from([] { return ollama_enc(false); }, toks, end(finish_reason::STOP, 4, "!"), 0));
    ASSERT_EQ(gen.size(), 6u);  // four token lines, the tail's line, the done line
    EXPECT_EQ(gen[0]["response"], "Hel");
    EXPECT_EQ(gen[2]["response"], "");
    EXPECT_EQ(gen[4]["response"], "!");
    EXPECT_EQ(gen[0]["done"], false);
    const json &done = gen[5];
    EXPECT_EQ(done["done"], true);
    EXPECT_EQ(done["done_reason"], "stop");
    // The model's own end: its end-of-generation token is counted, as Ollama counts it.
    EXPECT_EQ(done["eval_count"], 4 + 1);
    EXPECT_EQ(done["prompt_eval_count"], 12 - 7);  // the prefix cache supplied 7
    EXPECT_EQ(done["context"], json::array({1, 2, 3, 100, 101, 102, 103}));
    const auto chat =
        ndjson(read_from([] { return ollama_enc(true); }, toks, end(finish_reason::LENGTH, 4), 0));
    ASSERT_EQ(chat.size(), 5u);
    EXPECT_EQ(chat[1]["message"]["content"], "lo");
    EXPECT_EQ(chat[1]["message"]["role"], "assistant");
    EXPECT_EQ(chat[4]["done_reason"], "length");
    EXPECT_EQ(chat[4]["eval_count"], 4);
    EXPECT_FALSE(chat[4].contains("context"));
    // A stop string ended it: no end-of-generation token was sampled, none is counted.
    auto cut        = end(finish_reason::STOP, 4);
    cut.stop_string = "!";
    const auto stop = ndjson(read_from([] { return ollama_enc(true); }, toks, cut, 0));
    EXPECT_EQ(stop.back()["done_reason"], "stop");
    EXPECT_EQ(stop.back()["eval_count"], 4);
}

TEST(OllamaStreamEncoder, AReaderAfterKTokenLinesGetsTheRestOfTheStream) {
    const auto toks = tokens({"a", "b", "c", "d", "e"});
    for (bool chat : {true, false}) {
        const factory make = [chat] { return ollama_enc(chat); };
        const auto fin     = end(finish_reason::STOP, 5, "!");
        const auto full    = ndjson(read_from(make, toks, fin, 0));
        for (size_t k = 1; k <= toks.size(); ++k) {
            const auto rest = ndjson(read_from(make, toks, fin, k));
            EXPECT_EQ(rest, std::vector<json>(full.begin() + static_cast<long>(k), full.end()))
                << "after " << k << " lines";
        }
    }
}

TEST(OllamaStreamEncoder, NumCtxEndsTheStreamAtItsLimitAndAFailureIsAnErrorLine) {
    const auto toks = tokens({"a", "b", "c", "d"});
    auto enc        = ollama_enc(true, 2);
    std::string out = enc->token(toks[0], id_of(0));
    EXPECT_FALSE(enc->ended());
    out += enc->token(toks[1], id_of(1));
    EXPECT_TRUE(enc->ended());
    EXPECT_EQ(enc->token(toks[2], id_of(2)), "");
    EXPECT_EQ(enc->finish(end(finish_reason::CANCELLED, 2), id_of(2)), "");
    const auto lines = ndjson(out);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[2]["done_reason"], "length");
    EXPECT_EQ(lines[2]["eval_count"], 2);

    session_event failed = end(finish_reason::ERROR, 1);
    failed.error         = "the worker failed";
    const auto f = ndjson(read_from([] { return ollama_enc(false); }, {toks[0]}, failed, 0));
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[1], json({{"error", "the worker failed"}}));
}
