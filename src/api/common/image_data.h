// An image as a request carries it inline: a data URL (OpenAI's image_url, Responses'
// input_image) or bare base64 (Anthropic's base64 source, Ollama's images). Decoded and checked
// at the edge, before any model sees it: valid base64, a format the worker's decoder reads
// (stb_image inside llama.cpp's mtmd: PNG, JPEG, GIF, BMP), at most a size. Its SHA-256 names it
// (the prefix cache and the journal will key images by it: docs/ARCHITECTURE.md, "Images").
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sf {

/** Most bytes one decoded image may have: 20 MiB (OpenAI's limit per image). */
inline constexpr size_t k_max_image_bytes = size_t(20) << 20;

/** A decoded inline image. */
struct image_data {
    std::string mime;    // from its bytes: image/png, image/jpeg, image/gif or image/bmp
    std::string bytes;   // the file's bytes
    std::string sha256;  // lower-case hex SHA-256 of `bytes`: the image's name
};

/** Why an inline image was refused. */
enum class image_error {
    NONE,
    NOT_DATA_URL,  // not "data:<type>;base64,<payload>"
    BAD_BASE64,    // a character outside the base64 alphabet, or misplaced padding
    TOO_LARGE,     // more than the limit once decoded
    NOT_AN_IMAGE,  // empty, or no PNG, JPEG, GIF or BMP signature
};

/** The MIME type of `bytes` by signature (PNG, JPEG, GIF, BMP), "" for anything else. */
std::string sniff_image_type(std::string_view bytes);

/**
 * Decodes standard base64 `b64` (RFC 4648 alphabet; '=' padding optional, only at the end; no
 * whitespace) and checks it is an image of at most `max_bytes` bytes. NONE with `out` filled,
 * else the reason.
 */
image_error decode_image_base64(std::string_view b64, size_t max_bytes, image_data &out);

/** The same for a data URL ("data:image/png;base64,...": any declared type; the bytes decide). */
image_error decode_image_data_url(std::string_view url, size_t max_bytes, image_data &out);

/** A client-facing sentence for `e`, e.g. "not a PNG, JPEG, GIF or BMP image". */
std::string image_error_text(image_error e, size_t max_bytes);

}  // namespace sf
