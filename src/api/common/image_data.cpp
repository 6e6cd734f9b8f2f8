#include "api/common/image_data.h"

#include <openssl/sha.h>

#include <array>
#include <cstdint>

namespace sf {

namespace {

// The 6-bit value of a base64 character, -1 for any other.
int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Strict base64: the alphabet, then at most two '=' that complete a 4-character group.
bool base64_decode(std::string_view in, std::string &out) {
    size_t n = in.size();
    while (n > 0 && in[n - 1] == '=' && in.size() - n < 2) --n;
    if (in.size() != n && in.size() % 4 != 0) return false;  // padding must complete a group
    if (n % 4 == 1) return false;                            // 6 bits cannot end a byte
    out.clear();
    out.reserve(n / 4 * 3 + 2);
    uint32_t acc = 0;
    int bits     = 0;
    for (size_t i = 0; i < n; ++i) {
        const int v = b64_value(static_cast<unsigned char>(in[i]));
        if (v < 0) return false;
        acc = (acc << 6) | uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(char((acc >> bits) & 0xff));
        }
    }
    return true;
}

std::string sha256_hex(std::string_view bytes) {
    std::array<unsigned char, SHA256_DIGEST_LENGTH> d{};
    SHA256(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), d.data());
    static const char *hex = "0123456789abcdef";
    std::string out;
    for (unsigned char c : d) out += {hex[c >> 4], hex[c & 15]};
    return out;
}

bool starts(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

}  // namespace

std::string sniff_image_type(std::string_view b) {
    if (starts(b, "\x89PNG\r\n\x1a\n")) return "image/png";
    if (starts(b, "\xff\xd8\xff")) return "image/jpeg";
    if (starts(b, "GIF87a") || starts(b, "GIF89a")) return "image/gif";
    if (starts(b, "BM") && b.size() > 14) return "image/bmp";
    return "";
}

image_error decode_image_base64(std::string_view b64, size_t max_bytes, image_data &out) {
    // Base64 carries 3 bytes per 4 characters: refuse a payload too large before decoding it.
    if (b64.size() / 4 * 3 > max_bytes + 2) return image_error::TOO_LARGE;
    if (!base64_decode(b64, out.bytes)) return image_error::BAD_BASE64;
    if (out.bytes.size() > max_bytes) return image_error::TOO_LARGE;
    out.mime = sniff_image_type(out.bytes);
    if (out.mime.empty()) return image_error::NOT_AN_IMAGE;
    out.sha256 = sha256_hex(out.bytes);
    return image_error::NONE;
}

image_error decode_image_data_url(std::string_view url, size_t max_bytes, image_data &out) {
    const size_t comma = url.find(',');
    if (!starts(url, "data:") || comma == std::string_view::npos) return image_error::NOT_DATA_URL;
    const std::string_view header = url.substr(0, comma);
    if (header.size() < 7 || header.substr(header.size() - 7) != ";base64")
        return image_error::NOT_DATA_URL;
    return decode_image_base64(url.substr(comma + 1), max_bytes, out);
}

std::string image_error_text(image_error e, size_t max_bytes) {
    switch (e) {
        case image_error::NONE:
            return "";
        case image_error::NOT_DATA_URL:
            return "not a base64 data URL (data:image/png;base64,...)";
        case image_error::BAD_BASE64:
            return "its data is not valid base64";
        case image_error::TOO_LARGE:
            return "the image is larger than " + std::to_string(max_bytes >> 20) + " MiB";
        case image_error::NOT_AN_IMAGE:
            return "the data is not a PNG, JPEG, GIF or BMP image";
    }
    return "";
}

}  // namespace sf
