#include "models/model_ref.h"

#include <filesystem>
#include <string_view>

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

// A revision as git accepts a ref name (git check-ref-format, the rules that matter for a
// path): a branch with slashes (refs/pr/1) or a commit, but no ".." or "." component, no
// component starting with '.', no empty component, no ".lock" suffix, no control character,
// space, backslash or any of ~^:?*[@. It names a folder under the model cache
// (hf_cache refs/), so "../" would have written outside it (issue #38).
static bool valid_revision(const std::string &r) {
    if (r.empty() || r.size() > 255 || r.front() == '/' || r.back() == '/' || r.back() == '.')
        return false;
    if (r.find("..") != std::string::npos || r.find("//") != std::string::npos ||
        r.find("/.") != std::string::npos || r.front() == '.')
        return false;
    if (r.size() >= 5 && r.compare(r.size() - 5, 5, ".lock") == 0) return false;
    for (unsigned char c : r)
        if (c < 0x20 || c == 0x7f ||
            std::string_view(" ~^:?*[\\@").find(static_cast<char>(c)) != std::string_view::npos)
            return false;
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
        if (!valid_revision(r.revision)) return std::nullopt;
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
