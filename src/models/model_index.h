// Superfluid's own list of pulled models: $STATE/models.json (the files themselves live in the
// Hugging Face cache, hf_cache.h). Written atomically (temp file + rename) under an flock on
// models.json.lock, so concurrent pulls in several processes do not lose entries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sf::models {

struct model_entry {
    std::string name;      // canonical "org/repo:QUANT" (+ "@rev" when a revision was pinned)
    std::string repo;      // "org/repo"
    std::string quant;     // as in the file name, e.g. "Q4_K_M"
    std::string revision;  // as asked ("" = main)
    std::string commit;    // 40-hex commit the files come from
    std::vector<std::string> files;  // repository paths (all shards)
    std::string path;                // absolute path of the first file (what the engine loads)
    uint64_t size     = 0;           // bytes, all files
    int64_t pulled_at = 0;           // unix seconds
};

class model_index {
  public:
    explicit model_index(std::string state_dir);

    std::vector<model_entry> list() const;
    /** The entry `name` designates: "org/repo:TAG[@rev]" (tag case-insensitive) or "org/repo"
     *  (the entry first in the default quant order). */
    std::optional<model_entry> find(const std::string &name) const;
    /** Adds or replaces the entry with the same name. */
    bool upsert(const model_entry &e);
    /** Removes the entry named exactly `name`; false when there was none. */
    bool remove(const std::string &name);

  private:
    std::vector<model_entry> read() const;
    bool write(const std::vector<model_entry> &v) const;

    std::string path_;
};

}  // namespace sf::models
