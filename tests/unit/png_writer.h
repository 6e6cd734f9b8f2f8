// A PNG encoder for tests that need real image files (8-bit RGB, no compression: the zlib stream
// is made of stored deflate blocks), so image tests need neither files nor an image library.
// Header only; plain functions, any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sf::test {

namespace png_detail {

// CRC-32 (ISO 3309, the polynomial 0xEDB88320 reflected) as PNG's chunks carry it.
inline uint32_t crc32(const std::string &bytes) {
    uint32_t c = 0xffffffffu;
    for (unsigned char b : bytes) {
        c ^= b;
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return c ^ 0xffffffffu;
}

// Adler-32 (RFC 1950), the zlib stream's trailer.
inline uint32_t adler32(const std::string &bytes) {
    uint32_t a = 1, b = 0;
    for (unsigned char x : bytes) {
        a = (a + x) % 65521u;
        b = (b + a) % 65521u;
    }
    return (b << 16) | a;
}

inline void put_be32(std::string &out, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(char((v >> s) & 0xff));
}

// One chunk: length, type, data, CRC of type and data.
inline void put_chunk(std::string &out, const char *type, const std::string &data) {
    put_be32(out, uint32_t(data.size()));
    const std::string typed = std::string(type, 4) + data;
    out += typed;
    put_be32(out, crc32(typed));
}

}  // namespace png_detail

/**
 * The PNG file of a `width` x `height` image whose pixels are `rgb` (3 bytes per pixel, rows
 * top to bottom, width * height * 3 bytes). Returns "" when the size does not match.
 */
inline std::string encode_png(uint32_t width, uint32_t height, const std::vector<uint8_t> &rgb) {
    using namespace png_detail;
    if (size_t(width) * height * 3 != rgb.size() || width == 0 || height == 0) return "";
    std::string raw;  // each row: filter type 0 (none), then its pixels
    for (uint32_t y = 0; y < height; ++y) {
        raw.push_back('\0');
        raw.append(reinterpret_cast<const char *>(rgb.data()) + size_t(y) * width * 3,
                   size_t(width) * 3);
    }
    std::string z = {'\x78', '\x01'};  // zlib header: deflate, 32K window, no dictionary
    for (size_t at = 0; at < raw.size() || at == 0;) {
        const size_t n    = std::min<size_t>(raw.size() - at, 65535);
        const bool last   = at + n == raw.size();
        const uint16_t ln = uint16_t(n), nln = uint16_t(~ln);
        z.push_back(last ? '\x01' : '\x00');  // BFINAL, BTYPE 00 (stored)
        z.push_back(char(ln & 0xff)), z.push_back(char(ln >> 8));
        z.push_back(char(nln & 0xff)), z.push_back(char(nln >> 8));
        z.append(raw, at, n);
        at += n;
        if (last) break;
    }
    put_be32(z, adler32(raw));

    std::string ihdr;
    put_be32(ihdr, width);
    put_be32(ihdr, height);
    ihdr += std::string{'\x08', '\x02', '\x00', '\x00', '\x00'};  // 8 bits, RGB, deflate, -, -
    std::string png = "\x89PNG\r\n\x1a\n";
    put_chunk(png, "IHDR", ihdr);
    put_chunk(png, "IDAT", z);
    put_chunk(png, "IEND", "");
    return png;
}

}  // namespace sf::test
