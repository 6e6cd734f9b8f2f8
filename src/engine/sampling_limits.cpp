#include "engine/sampling_limits.h"

#include <cmath>

namespace sf {

bool check_sampling(sampling_params &p, std::string &message, std::string &param) {
    auto fail = [&](const char *name, const char *what) {
        param   = name;
        message = std::string("'") + name + "' " + what;
        return false;
    };
    if (!std::isfinite(p.temperature)) return fail("temperature", "must be a finite number");
    if (p.temperature > 0 && p.temperature < k_min_sampling_temperature) p.temperature = 0;
    if (!std::isfinite(p.top_p)) return fail("top_p", "must be a finite number");
    if (!std::isfinite(p.min_p)) return fail("min_p", "must be a finite number");
    if (!std::isfinite(p.repeat_penalty) || p.repeat_penalty <= 0 ||
        !std::isfinite(1.0f / p.repeat_penalty))
        return fail("repeat_penalty", "must be a finite number greater than 0 (1 disables it)");
    if (!std::isfinite(p.presence_penalty))
        return fail("presence_penalty", "must be a finite number");
    if (!std::isfinite(p.frequency_penalty))
        return fail("frequency_penalty", "must be a finite number");
    return true;
}

}  // namespace sf
