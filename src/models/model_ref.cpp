#include "models/model_ref.h"

#include <filesystem>

namespace sf::models {

static bool valid_part(const std::string &s) {
    if (s.empty() || s == "." || s == "..") return false;
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.';
        if (!ok) return false;
    }
    return true;
}

std::string model_ref::display() const {
    std::string s = repo;
    if (!tag.empty()) s += ":" + tag;
    if (!revision.empty()) s += "@" + revision;
    return s;
}

std::optional<model_ref> parse_model_ref(const std::string &text) {
    model_ref r;
    std::string rest = text;
    if (auto at = rest.find('@'); at != std::string::npos) {
        r.revision = rest.substr(at + 1);
        rest       = rest.substr(0, at);
        // A revision may be a branch with slashes (refs/pr/1) but not empty or spaced.
        if (r.revision.empty() || r.revision.find_first_of(" \t\n:@") != std::string::npos)
            return std::nullopt;
    }
    if (auto colon = rest.find(':'); colon != std::string::npos) {
        r.tag = rest.substr(colon + 1);
        rest  = rest.substr(0, colon);
        if (!valid_part(r.tag)) return std::nullopt;
    }
    auto slash = rest.find('/');
    if (slash == std::string::npos || rest.find('/', slash + 1) != std::string::npos)
        return std::nullopt;
    if (!valid_part(rest.substr(0, slash)) || !valid_part(rest.substr(slash + 1)))
        return std::nullopt;
    r.repo = rest;
    return r;
}

bool is_local_model_path(const std::string &text) {
    if (text.empty()) return false;
    if (text[0] == '/' || text[0] == '~' || text.rfind("./", 0) == 0 || text.rfind("../", 0) == 0)
        return true;
    if (text.size() > 5 && text.compare(text.size() - 5, 5, ".gguf") == 0) return true;
    std::error_code ec;
    return std::filesystem::exists(text, ec);
}

}  // namespace sf::models
