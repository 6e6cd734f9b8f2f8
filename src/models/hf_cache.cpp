#include "models/hf_cache.h"
#include "models/hub_listing.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace sf::models {

namespace fs = std::filesystem;

bool is_commit_id(const std::string &s) {
    return is_hex_digest(s, 40);
}

std::string hf_cache::hf_home() {
    if (const char *v = std::getenv("HF_HOME"); v && *v) return v;
    if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return std::string(x) + "/huggingface";
    const char *home = std::getenv("HOME");
    return std::string(home && *home ? home : "/tmp") + "/.cache/huggingface";
}

std::string hf_cache::hub_dir_from_env() {
    if (const char *v = std::getenv("HF_HUB_CACHE"); v && *v) return v;
    return hf_home() + "/hub";
}

hf_cache::hf_cache(std::string hub_dir)
    : root_(hub_dir.empty() ? hub_dir_from_env() : std::move(hub_dir)) {}

// "org/repo" → "models--org--repo" (huggingface_hub's repo_folder_name).
static std::string folder(const std::string &repo) {
    std::string s = "models--";
    for (char c : repo) {
        if (c == '/')
            s += "--";
        else
            s += c;
    }
    return s;
}

std::string hf_cache::repo_dir(const std::string &repo) const {
    return root_ + "/" + folder(repo);
}
std::string hf_cache::blob_path(const std::string &repo, const std::string &etag) const {
    return repo_dir(repo) + "/blobs/" + etag;
}
std::string hf_cache::lock_path(const std::string &repo, const std::string &etag) const {
    return root_ + "/.locks/" + folder(repo) + "/" + etag + ".lock";
}
std::string hf_cache::snapshot_path(const std::string &repo, const std::string &commit,
                                    const std::string &file) const {
    return repo_dir(repo) + "/snapshots/" + commit + "/" + file;
}

bool hf_cache::has_file(const std::string &repo, const std::string &commit,
                        const repo_file &f) const {
    std::error_code ec;
    auto p = snapshot_path(repo, commit, f.path);
    return fs::is_regular_file(p, ec) && fs::file_size(p, ec) == f.size && !ec;
}

bool hf_cache::link_snapshot(const std::string &repo, const std::string &commit, const repo_file &f,
                             std::string &error) const {
    fs::path link(snapshot_path(repo, commit, f.path));
    std::error_code ec;
    fs::create_directories(link.parent_path(), ec);
    // ../../blobs/<etag> from snapshots/<commit>/, one more ../ per directory in the path.
    std::string target = "../../";
    for (char c : f.path)
        if (c == '/') target += "../";
    target += "blobs/" + f.etag();
    fs::remove(link, ec);
    fs::create_symlink(target, link, ec);
    if (ec) {
        error = "cannot link " + link.string() + ": " + ec.message();
        return false;
    }
    return true;
}

void hf_cache::write_ref(const std::string &repo, const std::string &rev,
                         const std::string &commit) const {
    if (is_commit_id(rev)) return;
    fs::path p(repo_dir(repo) + "/refs/" + rev);
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    std::string tmp = p.string() + ".tmp" + std::to_string(getpid());
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << commit;  // no newline, like huggingface_hub
    }
    fs::rename(tmp, p, ec);
}

std::optional<std::string> hf_cache::read_ref(const std::string &repo,
                                              const std::string &rev) const {
    if (is_commit_id(rev)) return rev;
    std::ifstream f(repo_dir(repo) + "/refs/" + rev);
    std::string commit;
    if (!(f >> commit) || !is_commit_id(commit)) return std::nullopt;
    return commit;
}

std::vector<repo_file> hf_cache::snapshot_files(const std::string &repo,
                                                const std::string &commit) const {
    std::vector<repo_file> out;
    fs::path dir(repo_dir(repo) + "/snapshots/" + commit);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;  // follows the link; dangling ones are skipped
        repo_file f;
        f.path           = it->path().lexically_relative(dir).string();  // relative() follows links
        f.size           = fs::file_size(it->path(), ec);
        std::string blob = fs::read_symlink(it->path(), ec).filename().string();
        if (!ec && is_hex_digest(blob, 64))
            f.sha256 = blob;
        else
            f.git_oid = blob;
        ec.clear();
        out.push_back(std::move(f));
    }
    return out;
}

uint64_t hf_cache::remove_files(const std::string &repo, const std::string &commit,
                                const std::vector<std::string> &paths) const {
    std::error_code ec;
    for (const auto &p : paths) {
        fs::path link(snapshot_path(repo, commit, p));
        fs::remove(link, ec);
        // Remove directories the removal emptied, up to the snapshot directory.
        fs::path snap(repo_dir(repo) + "/snapshots/" + commit);
        for (auto d = link.parent_path(); d.string().size() >= snap.string().size();
             d      = d.parent_path()) {
            if (!fs::is_empty(d, ec) || ec) break;
            fs::remove(d, ec);
        }
    }
    // Blobs some remaining snapshot entry still points to stay.
    std::set<std::string> used;
    fs::path snaps(repo_dir(repo) + "/snapshots");
    for (auto it = fs::recursive_directory_iterator(snaps, ec); !ec && it != fs::end(it);
         it.increment(ec))
        if (it->is_symlink(ec)) used.insert(fs::read_symlink(it->path(), ec).filename().string());
    ec.clear();
    uint64_t freed = 0;
    fs::path blobs(repo_dir(repo) + "/blobs");
    for (auto it = fs::directory_iterator(blobs, ec); !ec && it != fs::end(it); it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (used.count(name) || name.find('.') != std::string::npos) continue;  // .incomplete
        freed += fs::file_size(it->path(), ec);
        fs::remove(it->path(), ec);
    }
    return freed;
}

}  // namespace sf::models
