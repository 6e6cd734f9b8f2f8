#include "models/hub_listing.h"

#include <nlohmann/json.hpp>

namespace sf::models {

using json = nlohmann::json;

bool safe_repo_path(const std::string &p) {
    if (p.empty() || p[0] == '/' || p.find('\0') != std::string::npos) return false;
    size_t start = 0;
    while (true) {
        size_t slash     = p.find('/', start);
        std::string part = p.substr(start, slash - start);
        if (part.empty() || part == "." || part == "..") return false;
        if (slash == std::string::npos) return true;
        start = slash + 1;
    }
}

bool is_hex_digest(const std::string &s, size_t n) {
    if (s.size() != n) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

// A string member, or "" when absent or of another type.
static std::string str(const json &o, const char *key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

// An unsigned member, or `dflt` when absent or of another type.
static uint64_t size_of(const json &o, const char *key, uint64_t dflt) {
    auto it = o.find(key);
    return it != o.end() && it->is_number_unsigned() ? it->get<uint64_t>() : dflt;
}

bool parse_tree_page(std::string_view body, std::vector<repo_file> &files) {
    auto list = json::parse(body, nullptr, false);
    if (!list.is_array()) return false;
    for (const auto &e : list) {
        if (!e.is_object() || str(e, "type") != "file") continue;
        repo_file f;
        f.path    = str(e, "path");
        f.size    = size_of(e, "size", 0);
        f.git_oid = str(e, "oid");
        if (auto lfs = e.find("lfs"); lfs != e.end() && lfs->is_object()) {
            f.sha256 = str(*lfs, "oid");
            f.size   = size_of(*lfs, "size", f.size);
            if (!is_hex_digest(f.sha256, 64)) continue;
        } else if (!is_hex_digest(f.git_oid, 40)) {
            continue;  // the blob would be named by it
        }
        if (safe_repo_path(f.path)) files.push_back(std::move(f));
    }
    return true;
}

std::string next_page_link(const std::string &v) {
    auto rel = v.find("rel=\"next\"");
    if (rel == std::string::npos) return "";
    auto open = v.rfind('<', rel);
    if (open == std::string::npos) return "";
    auto close = v.find('>', open);
    if (close == std::string::npos || close > rel) return "";
    return v.substr(open + 1, close - open - 1);
}

}  // namespace sf::models
