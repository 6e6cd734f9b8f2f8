#include "session/latency_metrics.h"

#include <cstdio>

namespace sf {

void histogram::observe(double v) {
    std::lock_guard lk(mu_);
    size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) ++i;
    counts_[i]++;
    sum_ += v;
    count_++;
}

static std::string num(double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

void histogram::render(const std::string &name, const std::string &labels, std::string &out) const {
    std::lock_guard lk(mu_);
    uint64_t cum = 0;
    for (size_t i = 0; i < bounds_.size(); ++i) {
        cum += counts_[i];
        out += name + "_bucket{" + labels + ",le=\"" + num(bounds_[i]) + "\"} " +
               std::to_string(cum) + "\n";
    }
    cum += counts_.back();
    out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(cum) + "\n";
    out += name + "_sum{" + labels + "} " + num(sum_) + "\n";
    out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

static const std::vector<double> k_ttft_bounds = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06,  0.08,
                                                  0.1,   0.25,  0.5,  0.75, 1.0,  2.5,   5.0,
                                                  7.5,   10.0,  20.0, 40.0, 80.0, 160.0, 640.0};
static const std::vector<double> k_itl_bounds  = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                                  0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                                  7.5,  10.0,  20.0, 40.0,  80.0};

latency_metrics::latency_metrics()
    : ttft_{histogram(k_ttft_bounds), histogram(k_ttft_bounds), histogram(k_ttft_bounds)},
      itl_{histogram(k_itl_bounds), histogram(k_itl_bounds), histogram(k_itl_bounds)} {}

void latency_metrics::render(std::string &out) const {
    out +=
        "# HELP superfluid:time_to_first_token_seconds time from request to first token, by "
        "class\n";
    out += "# TYPE superfluid:time_to_first_token_seconds histogram\n";
    for (int c = 0; c < k_classes; ++c) {
        ttft_[c].render("superfluid:time_to_first_token_seconds",
                        std::string("priority=\"") + k_class_names[c] + "\"", out);
    }
    out +=
        "# HELP superfluid:inter_token_latency_seconds time between two tokens of a stream, by "
        "class\n";
    out += "# TYPE superfluid:inter_token_latency_seconds histogram\n";
    for (int c = 0; c < k_classes; ++c) {
        itl_[c].render("superfluid:inter_token_latency_seconds",
                       std::string("priority=\"") + k_class_names[c] + "\"", out);
    }
}

}  // namespace sf
