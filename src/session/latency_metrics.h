// Head-side latency histograms per priority class: time to first token (from the request
// reaching the session layer) and inter-token latency, in seconds. Bucket bounds follow
// vLLM's metrics (vllm/engine/metrics.py). Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/session_event.h"

namespace sf {

/** A Prometheus-style histogram: cumulative bucket counts, sum and count. */
class histogram {
  public:
    explicit histogram(std::vector<double> bounds)
        : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
    void observe(double v);
    /** Appends the Prometheus text lines for `name` with `labels` (e.g. priority="batch"). */
    void render(const std::string &name, const std::string &labels, std::string &out) const;

  private:
    mutable std::mutex mu_;
    std::vector<double> bounds_;
    std::vector<uint64_t> counts_;  // per bucket (last: +Inf), not cumulative
    double sum_     = 0;
    uint64_t count_ = 0;
};

class latency_metrics {
  public:
    latency_metrics();
    void observe_ttft(priority_class c, double seconds) {
        ttft_[static_cast<int>(c)].observe(seconds);
    }
    void observe_itl(priority_class c, double seconds) {
        itl_[static_cast<int>(c)].observe(seconds);
    }
    /** Appends superfluid:time_to_first_token_seconds and superfluid:inter_token_latency_seconds.
     */
    void render(std::string &out) const;

  private:
    std::array<histogram, 3> ttft_;
    std::array<histogram, 3> itl_;
};

}  // namespace sf
