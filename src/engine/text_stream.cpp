#include "engine/text_stream.h"

#include <algorithm>

#include "util/utf8.h"

namespace sf {

text_stream::text_stream(std::vector<std::string> stops) {
    for (auto &s : stops) {
        if (!s.empty()) stops_.push_back(std::move(s));
    }
}

std::string text_stream::push(std::string_view piece) {
    if (stopped_) return {};
    pending_.append(piece);

    // A complete stop string: release what precedes the earliest one and stop.
    size_t first = std::string::npos;
    for (const auto &s : stops_) {
        size_t at = pending_.find(s);
        if (at != std::string::npos && (first == std::string::npos || at < first)) {
            first    = at;
            matched_ = s;
        }
    }
    if (first != std::string::npos) {
        stopped_        = true;
        std::string out = pending_.substr(0, first);
        pending_.clear();
        return out;
    }

    // Hold back the longest tail that is a proper prefix of some stop string.
    size_t hold = 0;
    for (const auto &s : stops_) {
        size_t max_len = std::min(s.size() - 1, pending_.size());
        for (size_t len = max_len; len > hold; --len) {
            if (pending_.compare(pending_.size() - len, len, s, 0, len) == 0) {
                hold = len;
                break;
            }
        }
    }
    size_t release = pending_.size() - hold;
    // And never split a code point.
    release         = utf8::complete_prefix(std::string_view(pending_).substr(0, release));
    std::string out = pending_.substr(0, release);
    pending_.erase(0, release);
    return out;
}

std::string text_stream::flush() {
    std::string out;
    out.swap(pending_);
    return out;
}

}  // namespace sf
