#include "models/model_index.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "models/model_ref.h"
#include "models/quant_selector.h"

namespace sf::models {

using json = nlohmann::json;

namespace {

// Holds an flock on "<index>.lock" for its lifetime.
class index_lock {
  public:
    explicit index_lock(const std::string &index_path) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(index_path).parent_path(), ec);
        fd_ = open((index_path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ >= 0) flock(fd_, LOCK_EX);
    }
    ~index_lock() {
        if (fd_ >= 0) close(fd_);
    }

  private:
    int fd_ = -1;
};

std::string upper(std::string s) {
    for (auto &c : s) c = char(toupper(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

model_index::model_index(std::string state_dir) : path_(state_dir + "/models.json") {}

std::vector<model_entry> model_index::read() const {
    std::vector<model_entry> out;
    std::ifstream f(path_);
    if (!f) return out;
    auto j = json::parse(f, nullptr, false);
    if (!j.is_object() || !j.contains("models") || !j["models"].is_array()) return out;
    for (const auto &m : j["models"]) {
        model_entry e;
        e.name      = m.value("name", "");
        e.repo      = m.value("repo", "");
        e.quant     = m.value("quant", "");
        e.revision  = m.value("revision", "");
        e.commit    = m.value("commit", "");
        e.files     = m.value("files", std::vector<std::string>{});
        e.path      = m.value("path", "");
        e.size      = m.value("size", uint64_t{0});
        e.pulled_at = m.value("pulled_at", int64_t{0});
        if (!e.name.empty()) out.push_back(std::move(e));
    }
    return out;
}

bool model_index::write(const std::vector<model_entry> &v) const {
    json arr = json::array();
    for (const auto &e : v)
        arr.push_back({{"name", e.name},
                       {"repo", e.repo},
                       {"quant", e.quant},
                       {"revision", e.revision},
                       {"commit", e.commit},
                       {"files", e.files},
                       {"path", e.path},
                       {"size", e.size},
                       {"pulled_at", e.pulled_at}});
    std::string tmp = path_ + ".tmp" + std::to_string(getpid());
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << json{{"version", 1}, {"models", arr}}.dump(2) << "\n";
        if (!f) return false;
    }
    return std::rename(tmp.c_str(), path_.c_str()) == 0;
}

std::vector<model_entry> model_index::list() const {
    index_lock lock(path_);
    auto v = read();
    std::sort(v.begin(), v.end(),
              [](const model_entry &a, const model_entry &b) { return a.name < b.name; });
    return v;
}

std::optional<model_entry> model_index::find(const std::string &name) const {
    auto ref = parse_model_ref(name);
    if (!ref) return std::nullopt;
    auto all = list();
    std::vector<model_entry> same;
    for (auto &e : all)
        if (upper(e.repo) == upper(ref->repo) && e.revision == ref->revision &&
            (ref->tag.empty() || upper(e.quant) == upper(ref->tag)))
            same.push_back(e);
    if (same.empty()) return std::nullopt;
    for (const auto &want : kDefaultQuantOrder)
        for (auto &e : same)
            if (upper(e.quant) == want) return e;
    return same.front();
}

bool model_index::upsert(const model_entry &e) {
    index_lock lock(path_);
    auto v = read();
    v.erase(
        std::remove_if(v.begin(), v.end(), [&](const model_entry &x) { return x.name == e.name; }),
        v.end());
    v.push_back(e);
    return write(v);
}

bool model_index::remove(const std::string &name) {
    index_lock lock(path_);
    auto v    = read();
    auto size = v.size();
    v.erase(
        std::remove_if(v.begin(), v.end(), [&](const model_entry &x) { return x.name == name; }),
        v.end());
    return v.size() != size && write(v);
}

}  // namespace sf::models
