#include "models/hub_client.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

#include "models/hf_cache.h"
#include "models/hub_listing.h"

namespace sf::models {

using json = nlohmann::json;

static std::string env(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

hub_config hub_config::from_env() {
    hub_config c;
    if (auto e = env("HF_ENDPOINT"); !e.empty()) c.endpoint = e;
    while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
    c.token = env("HF_TOKEN");
    if (c.token.empty()) c.token = env("HUGGING_FACE_HUB_TOKEN");
    if (c.token.empty()) {
        std::ifstream f(hf_cache::hf_home() + "/token");
        std::getline(f, c.token);
        while (!c.token.empty() && isspace(static_cast<unsigned char>(c.token.back())))
            c.token.pop_back();
    }
    return c;
}

// Repository ids keep their slash; each part is escaped.
static std::string repo_path(const std::string &repo) {
    auto slash = repo.find('/');
    return http_fetch::escape(repo.substr(0, slash)) + "/" +
           http_fetch::escape(repo.substr(slash + 1));
}

static std::string path_escape(const std::string &path) {
    std::string out;
    size_t start = 0;
    while (true) {
        size_t slash = path.find('/', start);
        out += http_fetch::escape(path.substr(start, slash - start));
        if (slash == std::string::npos) break;
        out += "/";
        start = slash + 1;
    }
    return out;
}

hub_client::hub_client(hub_config cfg)
    : cfg_(std::move(cfg)), http_(http_config{cfg_.token, cfg_.connect_timeout_s, 30}) {}

std::string hub_client::file_url(const std::string &repo, const std::string &commit,
                                 const std::string &path) const {
    return cfg_.endpoint + "/" + repo_path(repo) + "/resolve/" + commit + "/" + path_escape(path);
}

hub_status hub_client::classify(const http_result &r, const std::string &repo,
                                const std::string &rev, std::string &error) const {
    if (!r.error.empty() && r.status == 0) {
        error = "cannot reach the hub at " + cfg_.endpoint + ": " + r.error;
        return hub_status::UNREACHABLE;
    }
    if (r.status == 200) return hub_status::OK;
    auto code_it     = r.headers.find("x-error-code");
    std::string code = code_it == r.headers.end() ? "" : code_it->second;
    if (code == "RevisionNotFound") {
        error = "revision \"" + rev + "\" not found in " + repo + " on " + cfg_.endpoint;
        return hub_status::REVISION_NOT_FOUND;
    }
    // The hub answers 401 (not 404) for a repository that does not exist when no token is sent,
    // so it cannot be told apart from a private one.
    if (r.status == 404 || code == "RepoNotFound") {
        error = "repository " + repo + " not found on " + cfg_.endpoint +
                (cfg_.token.empty() ? " (if it is private or gated, set HF_TOKEN)" : "");
        return hub_status::REPO_NOT_FOUND;
    }
    if (r.status == 401 || r.status == 403) {
        error = "access to " + repo + " denied by " + cfg_.endpoint + " (HTTP " +
                std::to_string(r.status) + ")" +
                (cfg_.token.empty() ? ": set HF_TOKEN" : ": check HF_TOKEN and the repo's terms");
        return hub_status::DENIED;
    }
    error = cfg_.endpoint + " answered HTTP " + std::to_string(r.status) + " for " + repo;
    return hub_status::FAILED;
}

// The hub pages listings by 1,000 files (its `tree` API); 10,000 pages is 10 million files.
constexpr int k_max_listing_pages = 10000;

hub_status hub_client::snapshot(const std::string &repo, const std::string &rev, repo_snapshot &out,
                                std::string &error) const {
    const std::string base = cfg_.endpoint + "/api/models/" + repo_path(repo);
    auto info              = http_.get(base + "/revision/" + http_fetch::escape(rev));
    if (auto s = classify(info, repo, rev, error); s != hub_status::OK) return s;
    auto j = json::parse(info.body, nullptr, false);
    if (j.is_discarded() || !j.contains("sha") || !j["sha"].is_string()) {
        error = cfg_.endpoint + " sent no commit id for " + repo + "@" + rev;
        return hub_status::FAILED;
    }
    out.commit = j["sha"].get<std::string>();
    out.files.clear();
    if (!is_commit_id(out.commit)) {  // it names a cache directory: nothing but 40 hex digits
        error = cfg_.endpoint + " sent an invalid commit id for " + repo + "@" + rev;
        return hub_status::FAILED;
    }

    std::string url = base + "/tree/" + out.commit + "?recursive=true";
    int pages       = 0;
    while (!url.empty()) {
        auto page = http_.get(url);
        if (auto s = classify(page, repo, rev, error); s != hub_status::OK) return s;
        if (!parse_tree_page(page.body, out.files)) {
            error = cfg_.endpoint + " sent an unreadable file listing for " + repo;
            return hub_status::FAILED;
        }
        auto link = page.headers.find("link");
        url       = link == page.headers.end() ? "" : next_page_link(link->second);
        // The next page must be on the same endpoint (the token goes with every request), and
        // a listing that never ends is refused rather than followed forever.
        if (!url.empty() && url.rfind(cfg_.endpoint + "/", 0) != 0) {
            error = cfg_.endpoint + " sent a next-page link to another host (" + url + ")";
            return hub_status::FAILED;
        }
        if (++pages > k_max_listing_pages) {
            error = cfg_.endpoint + " sent more than " + std::to_string(k_max_listing_pages) +
                    " listing pages for " + repo;
            return hub_status::FAILED;
        }
    }
    return hub_status::OK;
}

}  // namespace sf::models
