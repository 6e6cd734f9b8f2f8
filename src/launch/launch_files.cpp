#include "launch/launch_files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace sf::launch {

namespace fs = std::filesystem;

std::string backup_path(const std::string &path) {
    return path + ".superfluid-backup";
}

bool write_files(const launch_plan &p) {
    for (const auto &f : p.files) {
        std::error_code ec;
        fs::create_directories(fs::path(f.path).parent_path(), ec);
        if (f.restore) {
            const std::string bak = backup_path(f.path);
            if (fs::exists(bak, ec)) fs::rename(bak, f.path, ec);
            if (fs::exists(f.path, ec))
                fs::copy_file(f.path, bak, fs::copy_options::overwrite_existing, ec);
            if (ec) {
                fprintf(stderr, "superfluid launch: cannot back up %s: %s\n", f.path.c_str(),
                        ec.message().c_str());
                return false;
            }
        }
        std::ofstream out(f.path, std::ios::trunc);
        out << f.content;
        if (!out) {
            fprintf(stderr, "superfluid launch: cannot write %s\n", f.path.c_str());
            return false;
        }
    }
    return true;
}

void restore_files(const launch_plan &p) {
    for (const auto &f : p.files) {
        if (!f.restore) continue;
        std::error_code ec;
        const std::string bak = backup_path(f.path);
        if (fs::exists(bak, ec))
            fs::rename(bak, f.path, ec);
        else
            fs::remove(f.path, ec);  // it did not exist before the launch
    }
}

}  // namespace sf::launch
