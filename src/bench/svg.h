// Minimal SVG charts for the bench report (no dependencies).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sf::bench {

/** One named series of a grouped bar chart: one value per category (NaN = no bar). */
struct bar_series {
    std::string name;
    std::vector<double> values;
};

/** A grouped bar chart: categories along x, one bar per series in each, value labels on top. */
std::string bar_chart(const std::string &title, const std::string &unit,
                      const std::vector<std::string> &categories,
                      const std::vector<bar_series> &series);

/** One line of a line chart: y per x (NaN = a gap), x ascending. */
struct line_series {
    std::string name;
    std::vector<double> x, y;
};

/** A line chart with shared axes from 0 to the largest x and y, one polyline per series. */
std::string line_chart(const std::string &title, const std::string &x_label,
                       const std::string &unit, const std::vector<line_series> &series);

/** One column of a distribution chart: every sample as a dot, p50 and p95 as ticks. */
struct dist_column {
    std::string label;   // e.g. "N=30"
    std::string series;  // server name (sets the colour)
    std::vector<double> values;
};

/** A strip chart of latency distributions, one column per (label, series). */
std::string distribution_chart(const std::string &title, const std::string &unit,
                               const std::vector<dist_column> &columns);

}  // namespace sf::bench
