#include "models/quant_selector.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace sf::models {

const std::vector<std::string> kDefaultQuantOrder = {
    "Q4_K_M", "UD-Q4_K_XL", "Q4_K_S",     "IQ4_XS", "Q4_0",       "Q5_K_M", "UD-Q5_K_XL",
    "Q5_K_S", "Q6_K",       "UD-Q6_K_XL", "Q8_0",   "UD-Q8_K_XL", "Q3_K_M", "UD-Q3_K_XL",
    "Q3_K_S", "Q2_K",       "BF16",       "F16",    "F32"};

static std::string upper(std::string s) {
    for (auto &c : s)
        if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
    return s;
}

static bool ends_with_ci(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && upper(s.substr(s.size() - suffix.size())) == upper(suffix);
}

// The path without ".gguf" and without a "-00001-of-00003" shard suffix.
static std::string group_key(const std::string &path) {
    static const std::regex shard(R"(-\d{5}-of-\d{5}$)");
    std::string s = path;
    if (ends_with_ci(s, ".gguf")) s.resize(s.size() - 5);
    return std::regex_replace(s, shard, "");
}

static bool is_gguf(const std::string &path) {
    if (!ends_with_ci(path, ".gguf")) return false;
    std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    return upper(name).rfind("MMPROJ", 0) != 0;  // vision projectors are not models
}

uint64_t gguf_group::total_size() const {
    uint64_t n = 0;
    for (const auto &f : files) n += f.size;
    return n;
}

std::string quant_of(const std::string &path) {
    std::string key = group_key(path);
    if (auto slash = key.rfind('/'); slash != std::string::npos) key = key.substr(slash + 1);
    // The quant is the name's last component; llama.cpp's quantize names (ggml ftype names),
    // optionally with unsloth's "UD-" (dynamic) prefix.
    static const std::regex quant(
        R"((?:^|[-._])((?:UD-)?(?:I?Q\d+(?:_[A-Z0-9]+)*|TQ\d_\d|BF16|F16|F32|MXFP4(?:_MOE)?))$)");
    std::smatch m;
    std::string up = upper(key);
    if (!std::regex_search(up, m, quant)) return "";
    return key.substr(size_t(m.position(1)), size_t(m.length(1)));
}

std::vector<gguf_group> gguf_groups(const std::vector<repo_file> &files) {
    std::map<std::string, std::vector<repo_file>> by_key;
    for (const auto &f : files)
        if (is_gguf(f.path)) by_key[group_key(f.path)].push_back(f);
    std::vector<gguf_group> out;
    for (auto &[key, v] : by_key) {
        std::sort(v.begin(), v.end(),
                  [](const repo_file &a, const repo_file &b) { return a.path < b.path; });
        out.push_back({quant_of(v.front().path), std::move(v)});
    }
    return out;
}

std::string available_quants(const std::vector<gguf_group> &groups) {
    std::set<std::string> names;
    for (const auto &g : groups) names.insert(g.quant.empty() ? g.files.front().path : g.quant);
    std::string s;
    for (const auto &n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
}

bool select_quant(const std::vector<repo_file> &files, const std::string &tag,
                  const std::string &repo, gguf_group &out, std::string &error) {
    auto groups = gguf_groups(files);
    if (groups.empty()) {
        error            = repo + " has no GGUF file";
        bool safetensors = std::any_of(files.begin(), files.end(), [](const repo_file &f) {
            return ends_with_ci(f.path, ".safetensors");
        });
        if (safetensors)
            error +=
                " (it holds safetensors weights: an MLX/transformers model, which needs an "
                "engine this build does not include; look for a -GGUF repository)";
        return false;
    }
    if (tag.empty()) {
        for (const auto &want : kDefaultQuantOrder)
            for (const auto &g : groups)
                if (upper(g.quant) == want) {
                    out = g;
                    return true;
                }
        out = groups.front();
        return true;
    }
    for (const auto &g : groups)
        if (upper(g.quant) == upper(tag)) {
            out = g;
            return true;
        }
    // A tag that is the tail of a name without a recognizable quant ("…-mytag.gguf").
    for (const auto &g : groups) {
        std::string key = group_key(g.files.front().path);
        for (const char *sep : {"-", ".", "_"})
            if (ends_with_ci(key, sep + tag)) {
                out = g;
                return true;
            }
    }
    error = "no GGUF file in " + repo + " matches the tag \"" + tag +
            "\"; available quantizations: " + available_quants(groups);
    return false;
}

}  // namespace sf::models
