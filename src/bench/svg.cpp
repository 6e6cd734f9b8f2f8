#include "bench/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "bench/stats.h"

namespace sf::bench {

namespace {

const char *kColours[] = {"#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#c53030"};

std::string esc(const std::string &s) {
    std::string o;
    for (char c : s) {
        if (c == '<')
            o += "&lt;";
        else if (c == '>')
            o += "&gt;";
        else if (c == '&')
            o += "&amp;";
        else
            o += c;
    }
    return o;
}

std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, v >= 100 ? "%.0f" : v >= 1 ? "%.2f" : "%.3f", v);
    return b;
}

std::string header(int w, int h, const std::string &title) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) +
           "\" height=\"" + std::to_string(h) +
           "\" font-family=\"sans-serif\" font-size=\"11\">\n" +
           "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"18\" " +
           "font-size=\"14\" font-weight=\"bold\">" + esc(title) + "</text>\n";
}

std::string legend(const std::vector<std::string> &names, int x, int y) {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) {
        int lx = x + static_cast<int>(i) * 160;
        s += "<rect x=\"" + std::to_string(lx) + "\" y=\"" + std::to_string(y - 9) +
             "\" width=\"10\" height=\"10\" fill=\"" + kColours[i % 5] + "\"/>";
        s += "<text x=\"" + std::to_string(lx + 14) + "\" y=\"" + std::to_string(y) + "\">" +
             esc(names[i]) + "</text>\n";
    }
    return s;
}

}  // namespace

std::string bar_chart(const std::string &title, const std::string &unit,
                      const std::vector<std::string> &categories,
                      const std::vector<bar_series> &series) {
    const int plot_h = 260, top = 50, left = 60, bar_w = 22;
    int group_w = std::max(90, static_cast<int>(series.size()) * bar_w + 30);
    int w       = left + group_w * static_cast<int>(categories.size()) + 20;
    int h       = top + plot_h + 110;
    double vmax = 0;
    for (const auto &s : series)
        for (double v : s.values)
            if (std::isfinite(v)) vmax = std::max(vmax, v);
    if (vmax <= 0) vmax = 1;
    std::string out = header(std::max(w, 400), h, title);
    std::vector<std::string> names;
    for (const auto &s : series) names.push_back(s.name);
    out += legend(names, left, 36);
    int base = top + plot_h;
    out += "<line x1=\"" + std::to_string(left) + "\" y1=\"" + std::to_string(base) + "\" x2=\"" +
           std::to_string(w - 10) + "\" y2=\"" + std::to_string(base) + "\" stroke=\"#333\"/>\n";
    out += "<text x=\"5\" y=\"" + std::to_string(top + 10) + "\">" + esc(unit) + "</text>\n";
    out += "<text x=\"5\" y=\"" + std::to_string(top + 24) + "\">max " + fmt(vmax) + "</text>\n";
    for (size_t c = 0; c < categories.size(); ++c) {
        int gx = left + static_cast<int>(c) * group_w + 10;
        for (size_t s = 0; s < series.size(); ++s) {
            double v = c < series[s].values.size() ? series[s].values[c] : NAN;
            int x    = gx + static_cast<int>(s) * bar_w;
            if (!std::isfinite(v)) {
                out += "<text x=\"" + std::to_string(x + 4) + "\" y=\"" + std::to_string(base - 4) +
                       "\" fill=\"#999\">–</text>\n";
                continue;
            }
            int bh = static_cast<int>(v / vmax * plot_h);
            out += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(base - bh) +
                   "\" width=\"" + std::to_string(bar_w - 4) + "\" height=\"" + std::to_string(bh) +
                   "\" fill=\"" + kColours[s % 5] + "\"><title>" +
                   esc(series[s].name + " " + categories[c] + ": " + fmt(v)) + "</title></rect>\n";
            out += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(base - bh - 3) +
                   "\" font-size=\"9\">" + fmt(v) + "</text>\n";
        }
        out += "<text transform=\"translate(" + std::to_string(gx) + "," +
               std::to_string(base + 14) + ") rotate(20)\">" + esc(categories[c]) + "</text>\n";
    }
    return out + "</svg>\n";
}

std::string distribution_chart(const std::string &title, const std::string &unit,
                               const std::vector<dist_column> &columns) {
    const int plot_h = 260, top = 50, left = 60, col_w = 80;
    int w       = std::max(400, left + col_w * static_cast<int>(columns.size()) + 20);
    int h       = top + plot_h + 60;
    double vmax = 0;
    std::vector<std::string> names;
    for (const auto &c : columns) {
        for (double v : c.values) vmax = std::max(vmax, v);
        if (std::find(names.begin(), names.end(), c.series) == names.end())
            names.push_back(c.series);
    }
    if (vmax <= 0) vmax = 1;
    std::string out = header(w, h, title) + legend(names, left, 36);
    int base        = top + plot_h;
    out += "<text x=\"5\" y=\"" + std::to_string(top + 10) + "\">" + esc(unit) + "</text>\n";
    out += "<text x=\"5\" y=\"" + std::to_string(top + 24) + "\">max " + fmt(vmax) + "</text>\n";
    out += "<line x1=\"" + std::to_string(left) + "\" y1=\"" + std::to_string(base) + "\" x2=\"" +
           std::to_string(w - 10) + "\" y2=\"" + std::to_string(base) + "\" stroke=\"#333\"/>\n";
    for (size_t c = 0; c < columns.size(); ++c) {
        const auto &col = columns[c];
        size_t si       = std::find(names.begin(), names.end(), col.series) - names.begin();
        int cx          = left + static_cast<int>(c) * col_w + col_w / 2;
        auto y          = [&](double v) { return base - static_cast<int>(v / vmax * plot_h); };
        for (size_t i = 0; i < col.values.size(); ++i) {
            int jitter = static_cast<int>((i * 37) % 21) - 10;
            out += "<circle cx=\"" + std::to_string(cx + jitter) + "\" cy=\"" +
                   std::to_string(y(col.values[i])) + "\" r=\"2\" fill=\"" + kColours[si % 5] +
                   "\" fill-opacity=\"0.6\"/>\n";
        }
        if (!col.values.empty()) {
            for (double p : {50.0, 95.0}) {
                double v = percentile(col.values, p);
                out += "<line x1=\"" + std::to_string(cx - 16) + "\" x2=\"" +
                       std::to_string(cx + 16) + "\" y1=\"" + std::to_string(y(v)) + "\" y2=\"" +
                       std::to_string(y(v)) + "\" stroke=\"#000\" stroke-width=\"" +
                       (p == 50 ? "2" : "1") + "\"><title>p" + fmt(p) + " " + fmt(v) +
                       "</title></line>\n";
            }
        }
        out += "<text x=\"" + std::to_string(cx - 30) + "\" y=\"" + std::to_string(base + 14) +
               "\">" + esc(col.label) + "</text>\n";
    }
    out += "<text x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(h - 10) +
           "\">dots: requests; thick tick: p50; thin tick: p95</text>\n";
    return out + "</svg>\n";
}

std::string line_chart(const std::string &title, const std::string &x_label,
                       const std::string &unit, const std::vector<line_series> &series) {
    const int w = 720, h = 340, left = 60, right = 20, top = 40, bottom = 60;
    double xmax = 0, ymax = 0;
    for (const auto &s : series) {
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (std::isnan(s.y[i])) continue;
            xmax = std::max(xmax, s.x[i]);
            ymax = std::max(ymax, s.y[i]);
        }
    }
    if (xmax <= 0) xmax = 1;
    if (ymax <= 0) ymax = 1;
    const double pw = w - left - right, ph = h - top - bottom;
    auto px         = [&](double x) { return left + x / xmax * pw; };
    auto py         = [&](double y) { return top + ph - y / ymax * ph; };
    std::string out = header(w, h, title);
    // Axes, four y gridlines with labels, the x label.
    for (int g = 0; g <= 4; ++g) {
        const double v = ymax * g / 4;
        out += "<line x1=\"" + fmt(left) + "\" y1=\"" + fmt(py(v)) + "\" x2=\"" + fmt(w - right) +
               "\" y2=\"" + fmt(py(v)) + "\" stroke=\"#ddd\"/><text x=\"" + fmt(left - 4) +
               "\" y=\"" + fmt(py(v) + 4) + "\" text-anchor=\"end\">" + fmt(v) + "</text>\n";
    }
    out += "<text x=\"" + fmt(left) + "\" y=\"" + fmt(top - 6) + "\">" + esc(unit) + "</text>\n";
    out += "<text x=\"" + fmt(left + pw / 2) + "\" y=\"" + fmt(h - bottom + 28) +
           "\" text-anchor=\"middle\">" + esc(x_label) + " (0–" + fmt(xmax) + ")</text>\n";
    std::vector<std::string> names;
    for (size_t k = 0; k < series.size(); ++k) {
        const auto &s = series[k];
        names.push_back(s.name);
        std::string pts;
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (std::isnan(s.y[i])) continue;
            pts += (pts.empty() ? "" : " ") + fmt(px(s.x[i])) + "," + fmt(py(s.y[i]));
        }
        out += std::string("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"") +
               kColours[k % 5] + "\" points=\"" + pts + "\"/>\n";
    }
    out += legend(names, left, h - 12);
    return out + "</svg>\n";
}

}  // namespace sf::bench
