// The refusal of an image, audio or file part (api/common/media_refusal.h) from each API's
// parser, and how the handler's explanation names the model and the reason.
#include "api/common/media_refusal.h"

#include <gtest/gtest.h>

#include "api/anthropic/anthropic_request.h"
#include "api/ollama/ollama_request.h"
#include "api/openai/openai_request.h"

using namespace sf;

namespace {

const char *k_image_body =
    R"({"messages":[{"role":"user","content":[{"type":"text","text":"what is it?"},
    {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]})";

}  // namespace

TEST(MediaRefusal, AnImagePartIsRefusedWhereItIsAsUnsupportedContent) {
    generate_request r;
    openai_options o;
    api_error e;
    EXPECT_FALSE(parse_openai_chat(k_image_body, r, o, e));
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "messages[0].content");
    EXPECT_EQ(e.code, "unsupported_content");
    EXPECT_NE(e.message.find("'image_url'"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("no vision support"), std::string::npos) << e.message;
    EXPECT_FALSE(e.media.empty());
}

TEST(MediaRefusal, ATextOnlyModelSaysItHasNoProjector) {
    api_error e = media_refusal("image_url", "messages[0].content");
    model_description text_only;
    explain_media_refusal(e, "tiny", &text_only);
    EXPECT_NE(e.message.find("model 'tiny' has no vision support"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("--mmproj"), std::string::npos) << e.message;
    EXPECT_EQ(e.param, "messages[0].content");  // where the part was, still
    EXPECT_EQ(e.code, "unsupported_content");

    api_error unknown = media_refusal("image_url", "messages[0].content");  // not reported yet
    explain_media_refusal(unknown, "tiny", nullptr);
    EXPECT_EQ(unknown.message, e.message);
}

TEST(MediaRefusal, AVisionModelSaysTheServerDoesNotPassImagesYet) {
    api_error e = media_refusal("image_url", "messages[0].content");
    model_description vision;
    vision.vision = true;
    explain_media_refusal(e, "tiny", &vision);
    EXPECT_NE(e.message.find("reads images through its projector"), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find("no vision support"), std::string::npos) << e.message;

    // Audio to a model whose projector reads images only: no audio support.
    api_error a = media_refusal("input_audio", "messages[0].content");
    explain_media_refusal(a, "tiny", &vision);
    EXPECT_NE(a.message.find("has no audio support"), std::string::npos) << a.message;
}

TEST(MediaRefusal, EveryApiRefusesItsImageForm) {
    generate_request r;
    api_error e;
    anthropic_options ao;
    EXPECT_FALSE(parse_anthropic_messages(
        /*body=*/R"({"model":"m","max_tokens":4,"messages":[{"role":"user","content":[
        {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]})",
        /*count_only=*/false, r, ao, e));
    EXPECT_EQ(e.code, "unsupported_content");
    EXPECT_FALSE(e.media.empty());

    api_error o;
    ollama_options oo;
    EXPECT_FALSE(parse_ollama_chat(
        R"({"model":"m","messages":[{"role":"user","content":"hi","images":["iVBORw0KGgo="]}]})", r,
        oo, o));
    EXPECT_EQ(o.code, "unsupported_content");
    EXPECT_EQ(o.param, "messages[0].images");
    explain_media_refusal(o, "tiny", nullptr);
    EXPECT_NE(o.message.find("images is not supported"), std::string::npos) << o.message;

    api_error untouched = bad_request("something else", "x");
    explain_media_refusal(untouched, "tiny", nullptr);
    EXPECT_EQ(untouched.message, "something else");
}
