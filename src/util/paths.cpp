#include "util/paths.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace sf::paths {

static std::string xdg(const char *var, const char *fallback_under_home) {
    if (const char *v = std::getenv(var); v && *v) return std::string(v) + "/superfluid";
    const char *home = std::getenv("HOME");
    return std::string(home && *home ? home : "/tmp") + "/" + fallback_under_home + "/superfluid";
}

std::string default_state_dir() {
    return xdg("XDG_STATE_HOME", ".local/state");
}
std::string default_cache_dir() {
    return xdg("XDG_CACHE_HOME", ".cache");
}

bool make_dirs(const std::string &dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return !ec;
}

}  // namespace sf::paths
