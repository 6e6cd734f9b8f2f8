#include "session/volatile_lines.h"

#include <strings.h>

namespace sf {

const std::vector<std::string> &volatile_line_prefixes() {
    static const std::vector<std::string> p = {"x-anthropic-billing-header:"};
    return p;
}

namespace {

bool is_volatile(const std::string &text, size_t begin, size_t end) {
    while (begin < end && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
    for (const auto &p : volatile_line_prefixes()) {
        if (end - begin >= p.size() && strncasecmp(text.data() + begin, p.data(), p.size()) == 0)
            return true;
    }
    return false;
}

}  // namespace

int normalize_volatile_lines(std::vector<chat_message> &messages) {
    int removed = 0;
    for (auto &m : messages) {
        if (m.role != "system" && m.role != "developer") continue;
        const std::string &c = m.content;
        std::string out;
        bool changed = false;
        for (size_t pos = 0; pos < c.size();) {
            size_t nl         = c.find('\n', pos);
            const size_t end  = nl == std::string::npos ? c.size() : nl;
            const size_t next = nl == std::string::npos ? c.size() : nl + 1;
            if (is_volatile(c, pos, end)) {
                changed = true;
                ++removed;
            } else {
                out.append(c, pos, next - pos);
            }
            pos = next;
        }
        if (!changed) continue;
        const size_t first = out.find_first_not_of("\r\n");
        m.content          = first == std::string::npos ? std::string() : out.substr(first);
    }
    return removed;
}

}  // namespace sf
