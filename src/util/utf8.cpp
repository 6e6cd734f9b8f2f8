#include "util/utf8.h"

namespace sf::utf8 {

// Expected length of a sequence from its lead byte; 0 for a continuation or invalid byte.
static int sequence_length(unsigned char c) {
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) return c >= 0xC2 ? 2 : 0;
    if ((c & 0xF0) == 0xE0) return 3;
    if ((c & 0xF8) == 0xF0) return c <= 0xF4 ? 4 : 0;
    return 0;
}

size_t complete_prefix(std::string_view s) {
    const size_t n = s.size();
    // Look back at most 3 bytes for the lead byte of a possibly unfinished sequence.
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        unsigned char c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
        int len = sequence_length(c);
        if (len > static_cast<int>(back))
            return n - back;  // lead byte whose sequence is not finished
        return n;
    }
    return n;
}

std::string sanitize(std::string_view s) {
    static const char replacement[] = "\xEF\xBF\xBD";
    std::string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        int len         = sequence_length(c);
        bool ok         = len > 0 && i + len <= s.size();
        for (int k = 1; ok && k < len; ++k) {
            ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
        }
        if (ok && len >= 3) {
            unsigned cp = len == 3
                              ? ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
                              : ((c & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) |
                                    ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
            // Reject overlong forms, surrogates and code points past U+10FFFF.
            if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
                (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
                ok = false;
            }
        }
        if (ok) {
            out.append(s.substr(i, len));
            i += len;
        } else {
            out.append(replacement);
            i += 1;
        }
    }
    return out;
}

}  // namespace sf::utf8
