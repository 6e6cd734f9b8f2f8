// The model store: `org/repo[:TAG][@rev]` → verified GGUF file(s) on disk (issue #8).
// Resolution asks the hub (hub_client.h) for the revision's commit and file list and picks the
// tag's files (quant_selector.h); files already in the Hugging Face cache are used as they
// are, missing ones are downloaded (blob_downloader.h). When the hub cannot be reached, a
// revision resolved before (refs/<rev> in the cache) is used offline. Every pull is recorded
// in the index (model_index.h). Thread-safe: every call works on files under locks.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/hub_client.h"
#include "models/model_index.h"
#include "models/model_ref.h"

namespace sf::models {

struct store_options {
    std::string state_dir;  // for the index
    std::string hub_dir;    // "" = $HF_HUB_CACHE or $HF_HOME/hub
    hub_config hub = hub_config::from_env();
};

/** What a pull reports as it goes; every member is optional. */
struct pull_events {
    // "pulling manifest", "verifying sha256 digest", "writing manifest", "success" (Ollama's words)
    std::function<void(const std::string &status)> status;
    // A file starts (completed = bytes already present) and advances.
    std::function<void(const repo_file &f, uint64_t completed)> progress;
    std::function<void(const std::string &)> note;  // offline use, resuming, waiting, …
    std::function<bool()> keep_going;               // false = stop (Ctrl-C, client gone)
};

enum class pull_status { OK, NOT_FOUND, UNREACHABLE, INTERRUPTED, FAILED };

class model_store {
  public:
    explicit model_store(store_options opts);

    /** Resolves and downloads what is missing; `out` is the index entry written. */
    pull_status pull(const model_ref &ref, const pull_events &ev, model_entry &out,
                     std::string &error) const;
    /** A pulled model whose files are all present, without asking the hub. */
    std::optional<model_entry> find(const std::string &name) const;
    std::vector<model_entry> list() const;
    /** Removes a pulled model (index entry, snapshot entries, blobs nothing else links to). */
    bool remove(const std::string &name, uint64_t &freed_bytes, std::string &error) const;

    const store_options &options() const { return opts_; }

  private:
    pull_status resolve(const model_ref &ref, const pull_events &ev, repo_snapshot &snap,
                        std::string &error) const;

    store_options opts_;
};

}  // namespace sf::models
