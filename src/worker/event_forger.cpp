#include "worker/event_forger.h"

#include <cstdlib>

#include "util/log.h"

namespace sf {

bool event_forger::enabled() {
    static const bool on = [] {
        const char *v  = std::getenv("SUPERFLUID_TEST_FORGE_EVENTS");
        const bool set = v != nullptr && *v != '\0' && std::string(v) != "0";
        if (set)
            SF_LOG_WARN("worker",
                        "SUPERFLUID_TEST_FORGE_EVENTS is set: this worker forges events for "
                        "sessions it no longer holds (a test of the head; never in use)");
        return set;
    }();
    return on;
}

void event_forger::saw(const std::vector<outbox_event> &sent) {
    std::lock_guard lk(mu_);
    for (const auto &e : sent)
        if (e.ev.type == session_event::kind::TOKEN) last_[e.session_id] = e;
}

std::vector<outbox_event> event_forger::forge() {
    std::map<std::string, outbox_event> last;
    {
        std::lock_guard lk(mu_);
        last.swap(last_);
    }
    std::vector<outbox_event> out;
    constexpr uint64_t k_epochs = 64;
    for (const auto &[id, e] : last) {
        for (uint64_t d = 1; d <= k_epochs; ++d) {
            outbox_event f = e;
            f.epoch        = e.epoch + d;
            for (uint32_t k = 1; k <= 3; ++k) {
                f.ev.index = e.ev.index + k;
                f.ev.text  = "FORGED";
                f.ev.piece = "FORGED";
                out.push_back(f);
            }
            f.ev                   = session_event{};
            f.ev.type              = session_event::kind::FINISHED;
            f.ev.reason            = finish_reason::STOP;
            f.ev.completion_tokens = static_cast<int32_t>(e.ev.index + 4);
            out.push_back(f);
        }
    }
    if (!out.empty())
        SF_LOG_WARN("worker", "test: forging %zu events for %zu sessions on a new Events call",
                    out.size(), last.size());
    return out;
}

}  // namespace sf
