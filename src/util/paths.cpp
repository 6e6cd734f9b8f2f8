#include "util/paths.h"

#include <sys/stat.h>

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

bool make_private_dirs(const std::string &dir) {
    if (!make_dirs(dir)) return false;
    restrict_mode(dir, 0700);
    return true;
}

void restrict_mode(const std::string &path, unsigned mode) {
    std::error_code ec;
    std::filesystem::permissions(path, static_cast<std::filesystem::perms>(mode),
                                 std::filesystem::perm_options::replace, ec);
}

void make_files_private() {
    ::umask(077);
}

}  // namespace sf::paths
