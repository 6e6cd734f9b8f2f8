// The Hugging Face hub's public HTTP API, the part a model pull needs:
//   GET {endpoint}/api/models/{repo}/revision/{rev}          → {"sha": commit, …}
//   GET {endpoint}/api/models/{repo}/tree/{commit}?recursive=true
//       → [{"type": "file", "path", "size", "oid", "lfs": {"oid": sha256, "size"}}, …]
//       (paged with a Link: <…>; rel="next" header)
//   GET {endpoint}/{repo}/resolve/{commit}/{path}            → the file (Range honoured)
// HF_ENDPOINT moves the endpoint (tests point it at a stand-in on loopback); HF_TOKEN (or
// HUGGING_FACE_HUB_TOKEN, or the file $HF_HOME/token that `huggingface-cli login` writes) is
// sent as a bearer token.
#pragma once

#include <string>

#include "models/http_fetch.h"
#include "models/repo_file.h"

namespace sf::models {

struct hub_config {
    std::string endpoint = "https://huggingface.co";
    std::string token;
    long connect_timeout_s = 10;

    /** From HF_ENDPOINT, HF_TOKEN / HUGGING_FACE_HUB_TOKEN / $HF_HOME/token. */
    static hub_config from_env();
};

enum class hub_status { OK, UNREACHABLE, REPO_NOT_FOUND, REVISION_NOT_FOUND, DENIED, FAILED };

class hub_client {
  public:
    explicit hub_client(hub_config cfg);

    /**
     * Resolves `rev` of `repo` to a commit and lists its files with sizes and SHA-256s.
     * On failure `error` says what happened in words a user can act on.
     */
    hub_status snapshot(const std::string &repo, const std::string &rev, repo_snapshot &out,
                        std::string &error) const;

    /** URL of a file's bytes at a commit. */
    std::string file_url(const std::string &repo, const std::string &commit,
                         const std::string &path) const;

    const http_fetch &http() const { return http_; }
    const hub_config &config() const { return cfg_; }

  private:
    hub_status classify(const http_result &r, const std::string &repo, const std::string &rev,
                        std::string &error) const;

    hub_config cfg_;
    http_fetch http_;
};

}  // namespace sf::models
