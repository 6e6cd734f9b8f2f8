#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sf::bench {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
    auto lo     = static_cast<size_t>(std::floor(rank));
    auto hi     = static_cast<size_t>(std::ceil(rank));
    return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

nlohmann::json summarize(const std::vector<double> &v) {
    if (v.empty()) return nullptr;
    auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    return {{"median", median(v)}, {"min", *mn}, {"max", *mx}};
}

nlohmann::json num(double x) {
    if (!std::isfinite(x)) return nullptr;
    return x;
}

}  // namespace sf::bench
