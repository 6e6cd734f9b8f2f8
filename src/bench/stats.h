// Order statistics for the bench: percentiles, medians, {median,min,max} summaries.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace sf::bench {

/** The p-th percentile (0..100) with linear interpolation; NaN for an empty sample. */
double percentile(std::vector<double> v, double p);

/** The median (percentile 50). */
inline double median(const std::vector<double> &v) {
    return percentile(v, 50);
}

/** {"median","min","max"} of a sample; null for an empty one. */
nlohmann::json summarize(const std::vector<double> &v);

/** A JSON number, or null when `x` is NaN or infinite. */
nlohmann::json num(double x);

}  // namespace sf::bench
