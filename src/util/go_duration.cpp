#include "util/go_duration.h"

#include <cctype>
#include <cstdlib>

namespace sf {

bool parse_go_duration(const std::string &s, double &seconds) {
    if (s.empty()) return false;
    size_t i  = 0;
    double sg = 1;
    if (s[0] == '-' || s[0] == '+') {
        sg = s[0] == '-' ? -1 : 1;
        i  = 1;
    }
    if (s.substr(i) == "0") {
        seconds = 0;
        return true;
    }
    double total = 0;
    bool any     = false;
    while (i < s.size()) {
        size_t start = i;
        while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
        if (i == start) return false;
        double v      = std::atof(s.substr(start, i - start).c_str());
        size_t ustart = i;
        while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
        const std::string u = s.substr(ustart, i - ustart);
        double mul          = u == "h"                 ? 3600
                              : u == "m"               ? 60
                              : u == "s"               ? 1
                              : u == "ms"              ? 1e-3
                              : u == "us" || u == "µs" ? 1e-6
                              : u == "ns"              ? 1e-9
                                                       : -1;
        if (mul < 0) return false;
        total += v * mul;
        any = true;
    }
    seconds = sg * total;
    return any;
}

}  // namespace sf
