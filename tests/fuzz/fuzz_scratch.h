// A per-process scratch folder for fuzz targets whose input is a file (the journal, a disk
// entry): emptied before and after each input, so no input sees another's files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace sf::fuzz {

/** Empties and recreates TMP/sf-fuzz-<tag>-<pid> and returns it. */
inline std::filesystem::path fresh_scratch(const std::string &tag) {
    const auto d = std::filesystem::temp_directory_path() /
                   ("sf-fuzz-" + tag + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

}  // namespace sf::fuzz
