// A scratch folder for one launch test (a fake $HOME and state directory), removed after it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sf::test {

struct temp_dir {
    std::string path;

    temp_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "sf-launch-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir &)            = delete;
    temp_dir &operator=(const temp_dir &) = delete;

    /** Writes `content` to `file` (absolute), creating its folders. */
    void write(const std::string &file, const std::string &content) const {
        std::filesystem::create_directories(std::filesystem::path(file).parent_path());
        std::ofstream(file, std::ios::trunc) << content;
    }
    /** The content of `file`; "" when it does not exist. */
    static std::string read(const std::string &file) {
        std::ifstream f(file);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
};

}  // namespace sf::test
