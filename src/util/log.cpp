#include "util/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <string>

namespace sf::log {

static level configured_level() {
    static const level lvl = [] {
        const char *env = std::getenv("SUPERFLUID_LOG");
        if (!env) return level::INFO;
        if (!std::strcmp(env, "debug")) return level::DEBUG;
        if (!std::strcmp(env, "warn")) return level::WARN;
        if (!std::strcmp(env, "error")) return level::ERROR;
        return level::INFO;
    }();
    return lvl;
}

bool enabled(level lvl) {
    return lvl >= configured_level();
}

void write(level lvl, const char *component, const char *fmt, ...) {
    if (!enabled(lvl)) return;
    static const char *names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
    char msg[2048];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);

    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    tm tm_utc{};
    gmtime_r(&ts.tv_sec, &tm_utc);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%H:%M:%S", &tm_utc);

    std::string line = std::string(stamp) + "." +
                       std::to_string(ts.tv_nsec / 1000000 + 1000).substr(1) + " " +
                       names[static_cast<int>(lvl)] + " " + component + ": " + msg + "\n";
    // One write(2) per line so lines from threads and processes do not interleave.
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
}

bool first_sighting(const std::string &key) {
    static std::mutex mu;
    static std::set<std::string> seen;
    std::lock_guard<std::mutex> lock(mu);
    return seen.size() < 256 && seen.insert(key).second;
}

}  // namespace sf::log
