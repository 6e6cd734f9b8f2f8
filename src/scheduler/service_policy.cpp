#include "scheduler/service_policy.h"

#include <algorithm>
#include <cmath>

namespace sf {

double decayed_count::at_time(std::chrono::steady_clock::time_point now,
                              int64_t half_life_ms) const {
    if (value == 0 || half_life_ms <= 0 || now <= at) return value;
    const double ms = std::chrono::duration<double, std::milli>(now - at).count();
    return value * std::exp2(-ms / static_cast<double>(half_life_ms));
}

void decayed_count::add(double n, std::chrono::steady_clock::time_point now, int64_t half_life_ms) {
    value = at_time(now, half_life_ms) + n;
    at    = std::max(at, now);
}

void service_ledger::charge(decayed_count &seq, const std::string &client, int32_t tokens,
                            std::chrono::steady_clock::time_point now) {
    seq.add(tokens, now, opts_.half_life_ms);
    clients_[client].add(tokens, now, opts_.half_life_ms);
}

service_rank service_ledger::rank(const decayed_count &seq, const std::string &client,
                                  std::chrono::steady_clock::time_point now) const {
    service_rank r;
    r.seq = seq.at_time(now, opts_.half_life_ms);
    if (auto it = clients_.find(client); it != clients_.end())
        r.client = it->second.at_time(now, opts_.half_life_ms);
    return r;
}

void service_ledger::prune(std::chrono::steady_clock::time_point now) {
    std::erase_if(clients_,
                  [&](const auto &kv) { return kv.second.at_time(now, opts_.half_life_ms) < 1.0; });
}

int32_t min_share_tokens(double min_share, int32_t prefill_budget, int32_t quantum) {
    if (min_share <= 0 || prefill_budget <= 0) return 0;
    const int32_t q  = std::max(quantum, 1);
    const auto share = static_cast<int32_t>(min_share * prefill_budget) / q * q;  // whole quanta
    return std::min(std::max(share, q), prefill_budget);
}

}  // namespace sf
