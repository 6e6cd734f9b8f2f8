// A field of the wrong JSON type in a client's body is a 400 (or ignored where the field is
// optional), never an exception: json::value() throws on a present key of another type, and a
// throw in a handler is a 500. Each body below threw before fields::text_or/flag_or (the first
// found by fuzz_anthropic_request in its 10-minute run; the others by reading for the same call).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/anthropic/anthropic_request.h"
#include "api/common/json_fields.h"
#include "api/responses/responses_request.h"

using namespace sf;
using json = nlohmann::json;

namespace {

// Parses an Anthropic body; returns the error's status (0: accepted).
int anthropic_status(const json &body) {
    generate_request g;
    anthropic_options o;
    api_error e;
    bool ok = false;
    EXPECT_NO_THROW(ok = parse_anthropic_messages(body.dump(), false, g, o, e)) << body.dump();
    return ok ? 0 : e.status;
}

int responses_status(const json &body) {
    generate_request g;
    responses_options o;
    api_error e;
    bool ok = false;
    EXPECT_NO_THROW(ok = parse_responses_request(body.dump(), g, o, e)) << body.dump();
    return ok ? 0 : e.status;
}

}  // namespace

TEST(WrongTypes, AnthropicMessageRoleOfAnotherTypeIs400) {
    // fuzz_anthropic_request's crash input, reduced.
    const json body =
        json::parse(R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"x"},)"
                    R"({"role":{"name":"f","parameters":{"type":"object"}}}]})");
    EXPECT_EQ(anthropic_status(body), 400);
}

TEST(WrongTypes, AnthropicOutputFormatNotAnObjectIs400) {
    const json body = {{"model", "m"},
                       {"max_tokens", 8},
                       {"messages", {{{"role", "user"}, {"content", "x"}}}},
                       {"output_format", "json"}};
    EXPECT_EQ(anthropic_status(body), 400);
}

TEST(WrongTypes, ResponsesToolFieldsOfAnotherTypeNeverThrow) {
    const json tool_type = {{"model", "m"}, {"input", "x"}, {"tools", {{{"type", 7}}}}};
    const json format    = {{"model", "m"},
                            {"input", "x"},
                            {"tools",
                             {{{"type", "custom"},
                               {"name", "t"},
                               {"format", {{"type", 1}, {"syntax", 2}, {"definition", "d"}}}}}}};
    const json choice    = {
           {"model", "m"},
           {"input", "x"},
           {"tool_choice", {{"type", "allowed_tools"}, {"mode", 3}, {"tools", json::array()}}}};
    const json text_type = {
        {"model", "m"}, {"input", "x"}, {"text", {{"format", {{"type", {1}}}}}}};
    const json input_item = {{"model", "m"}, {"input", {{{"type", false}, {"content", "x"}}}}};
    for (const json &b : {tool_type, format, choice, text_type, input_item}) {
        const int status = responses_status(b);
        EXPECT_TRUE(status == 0 || status == 400) << b.dump() << " → " << status;
    }
}

TEST(WrongTypes, TextOrAndFlagOrFallBackOnAnyOtherType) {
    const json o = {{"s", "v"}, {"n", 1}, {"b", true}, {"a", {1}}};
    EXPECT_EQ(fields::text_or(o, "s"), "v");
    EXPECT_EQ(fields::text_or(o, "n", "d"), "d");
    EXPECT_EQ(fields::text_or(o, "missing", "d"), "d");
    EXPECT_EQ(fields::text_or(json("str"), "s", "d"), "d");
    EXPECT_TRUE(fields::flag_or(o, "b", false));
    EXPECT_TRUE(fields::flag_or(o, "a", true));
    EXPECT_FALSE(fields::flag_or(json::array(), "b", false));
}
