// Inline images at the edge (api/common/image_data.h) and the 4xx each API gives for corrupt,
// oversize or non-image data (api/common/media_refusal.h check_inline_image).
#include "api/common/image_data.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "api/common/media_refusal.h"
#include "api/ollama/ollama_request.h"
#include "api/openai/openai_request.h"
#include "png_writer.h"

using namespace sf;

namespace {

std::string base64(const std::string &bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int n =
        EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                        reinterpret_cast<const unsigned char *>(bytes.data()), int(bytes.size()));
    out.resize(size_t(n));
    return out;
}

const char *k_png_signature = "iVBORw0KGgo=";  // the 8 bytes every PNG starts with

}  // namespace

TEST(ImageData, SniffsTheFormatsTheWorkerDecodes) {
    EXPECT_EQ(sniff_image_type("\x89PNG\r\n\x1a\n...."), "image/png");
    EXPECT_EQ(sniff_image_type("\xff\xd8\xff\xe0"), "image/jpeg");
    EXPECT_EQ(sniff_image_type("GIF89a..."), "image/gif");
    EXPECT_EQ(sniff_image_type("BM" + std::string(40, '\0')), "image/bmp");
    EXPECT_EQ(sniff_image_type("hello world"), "");
    EXPECT_EQ(sniff_image_type(""), "");
}

TEST(ImageData, DecodesARealPngAndNamesItByItsHash) {
    const std::string png = test::encode_png(4, 3, std::vector<uint8_t>(4 * 3 * 3, 200));
    image_data img;
    ASSERT_EQ(decode_image_data_url("data:image/png;base64," + base64(png), k_max_image_bytes, img),
              image_error::NONE);
    EXPECT_EQ(img.bytes, png);
    EXPECT_EQ(img.mime, "image/png");
    EXPECT_EQ(img.sha256.size(), 64u);
    image_data sig;
    ASSERT_EQ(decode_image_base64(k_png_signature, k_max_image_bytes, sig), image_error::NONE);
    EXPECT_EQ(sig.sha256, "4c4b6a3be1314ab86138bef4314dde022e600960d8689a2c8f8631802d20dab6");
    // Padding is optional; the declared type does not matter, the bytes do.
    EXPECT_EQ(decode_image_base64("/9j/4A", 100, sig), image_error::NONE);
    EXPECT_EQ(sig.mime, "image/jpeg");
    EXPECT_EQ(decode_image_data_url("data:image/webp;base64,R0lGODlh", 100, sig),
              image_error::NONE);
    EXPECT_EQ(sig.mime, "image/gif");
}

TEST(ImageData, RefusesWhatIsNoImage) {
    image_data img;
    EXPECT_EQ(decode_image_base64("aGVsbG8gd29ybGQ=", 100, img), image_error::NOT_AN_IMAGE);
    EXPECT_EQ(decode_image_base64("", 100, img), image_error::NOT_AN_IMAGE);
    EXPECT_EQ(decode_image_base64("iVBOR!0KGgo=", 100, img), image_error::BAD_BASE64);
    EXPECT_EQ(decode_image_base64("iVBORw0KGgo=x", 100, img), image_error::BAD_BASE64);
    EXPECT_EQ(decode_image_base64("=iVBORw0KGgo", 100, img), image_error::BAD_BASE64);
    EXPECT_EQ(decode_image_base64("iVBORw0KGg o=", 100, img), image_error::BAD_BASE64);
    EXPECT_EQ(decode_image_base64(k_png_signature, 7, img), image_error::TOO_LARGE);
    EXPECT_EQ(decode_image_data_url("data:image/png,iVBORw0KGgo=", 100, img),
              image_error::NOT_DATA_URL);
    EXPECT_EQ(decode_image_data_url("https://example.com/a.png", 100, img),
              image_error::NOT_DATA_URL);
}

TEST(ImageData, EachApiNamesTheBadImageBeforeAnyRefusalForTheModel) {
    generate_request r;
    openai_options o;
    api_error e;
    ASSERT_FALSE(parse_openai_chat(
        R"({"messages":[{"role":"user","content":[{"type":"text","text":"x"},
        {"type":"image_url","image_url":{"url":"data:image/png;base64,aGVsbG8gd29ybGQ="}}]}]})",
        r, o, e));
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.code, "invalid_image");
    EXPECT_EQ(e.param, "messages[0].content");
    EXPECT_NE(e.message.find("messages[0].content[1].image_url.url: the data is not a PNG"),
              std::string::npos)
        << e.message;
    EXPECT_TRUE(e.media.empty());  // not a refusal for the model's sake

    // A valid image still meets the refusal for the model (media_refusal).
    ASSERT_FALSE(parse_openai_chat(
        R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]})",
        r, o, e));
    EXPECT_EQ(e.code, "unsupported_content");

    ollama_options oo;
    api_error oe;
    ASSERT_FALSE(parse_ollama_chat(
        R"({"model":"m","messages":[{"role":"user","content":"x","images":["iVBORw0KGgo=","@@"]}]})",
        r, oo, oe));
    EXPECT_EQ(oe.code, "invalid_image");
    EXPECT_NE(oe.message.find("messages[0].images[1]: its data is not valid base64"),
              std::string::npos)
        << oe.message;

    api_error big;
    EXPECT_FALSE(check_inline_image(std::string(28 << 20, 'A'), false, "x", "x", big));
    EXPECT_EQ(big.code, "image_too_large");
    EXPECT_NE(big.message.find("larger than 20 MiB"), std::string::npos) << big.message;
}
