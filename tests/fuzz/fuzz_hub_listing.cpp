// libFuzzer target: the hub's file listing page and its Link header (models/hub_listing.h), bytes
// a remote server sends on every pull. Never throws; what it keeps is safe as file names.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_require.h"
#include "models/hub_listing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    std::vector<sf::models::repo_file> files;
    const bool array = sf::models::parse_tree_page(text, files);
    sf::fuzz::require(array || files.empty(), "a rejected page adds no file");
    for (const auto &f : files) {
        sf::fuzz::require(sf::models::safe_repo_path(f.path), "a kept path stays in the snapshot");
        const std::string &blob = f.etag();
        sf::fuzz::require(
            sf::models::is_hex_digest(blob, 64) || sf::models::is_hex_digest(blob, 40),
            "a blob name is a hex digest");
    }
    const std::string next = sf::models::next_page_link(text);
    sf::fuzz::require(next.size() <= text.size(), "the link is part of the header");
    return 0;
}
