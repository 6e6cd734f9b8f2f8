#include "util/proc_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace sf {

namespace {

// A "Key:   123 kB" field of a /proc file, in bytes, or -1.
int64_t proc_field_bytes(const std::string &file, const std::string &key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) != 0) continue;
        std::istringstream rest(line.substr(key.size()));
        int64_t kib = -1;
        rest >> kib;
        return kib < 0 ? -1 : kib * 1024;
    }
    return -1;
}

}  // namespace

int64_t mem_available_bytes() {
    return proc_field_bytes("/proc/meminfo", "MemAvailable:");
}

int64_t process_private_bytes(pid_t pid) {
    if (pid <= 0) return -1;
    return proc_field_bytes("/proc/" + std::to_string(pid) + "/status", "RssAnon:");
}

}  // namespace sf
