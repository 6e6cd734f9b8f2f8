#include "util/secret_source.h"

#include <sys/stat.h>

#include <cstdlib>

#include "util/file_text.h"

namespace sf {

namespace {

// Splits `text` at any of `seps`, trims each part, keeps the non-empty ones not starting with
// '#' (when `comments`).
std::vector<std::string> split_secrets(const std::string &text, const char *seps, bool comments) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find_first_of(seps, pos);
        if (end == std::string::npos) end = text.size();
        std::string part = text.substr(pos, end - pos);
        const size_t a   = part.find_first_not_of(" \t\r");
        const size_t b   = part.find_last_not_of(" \t\r");
        part             = a == std::string::npos ? "" : part.substr(a, b - a + 1);
        if (!part.empty() && !(comments && part.front() == '#')) out.push_back(std::move(part));
        pos = end + 1;
    }
    return out;
}

}  // namespace

bool read_secrets_file(const std::string &path, std::vector<std::string> &out, std::string &error,
                       std::string &warning) {
    std::string text;
    if (!read_file(path, text)) {
        error = "cannot read " + path;
        return false;
    }
    std::vector<std::string> found = split_secrets(text, "\n", true);
    if (found.empty()) {
        error = path + " holds no secret (one a line; '#' starts a comment)";
        return false;
    }
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
        warning = path + " may be read by other users (mode " +
                  std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                  std::to_string(st.st_mode & 7) + "): chmod 600 it";
    out.insert(out.end(), found.begin(), found.end());
    return true;
}

std::vector<std::string> secrets_from_env(const char *name) {
    const char *v = std::getenv(name);
    return v ? split_secrets(v, ",\n", false) : std::vector<std::string>{};
}

}  // namespace sf
