// libFuzzer target: the prefix cache's disk entry loader (cache/disk_store.h). The input is one
// entry file's bytes, stored under the name its header's token ids give (so the whole path runs:
// the start's scan, the checksum verification, find and load). Whatever the bytes, the store
// never crashes, and a payload it hands out lies inside the file.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/disk_store.h"
#include "fuzz_require.h"
#include "fuzz_scratch.h"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const fs::path dir = sf::fuzz::fresh_scratch("disk");
    fs::create_directories(dir / "fp");
    // The token ids the header names, when the bytes hold them: they name the file.
    std::vector<sf::token_id> tokens;
    uint32_t n = 0;
    if (size >= 20) std::memcpy(&n, data + 8, 4);
    if (n > 0 && n <= (size - std::min<size_t>(size, 20)) / 4) {
        tokens.resize(n);
        std::memcpy(tokens.data(), data + 20, n * 4);
    }
    const std::string name = tokens.empty() ? "x.sfpc" : sf::cache::entry_file_name(tokens);
    std::ofstream(dir / "fp" / name, std::ios::binary)
        .write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
    {
        sf::cache::disk_store d(dir.string(), "fp", int64_t{1} << 30);
        d.flush();  // the start's checksum verification
        if (!tokens.empty()) {
            auto m = d.find(tokens, static_cast<int32_t>(tokens.size()));
            sf::cache::mapped_payload out;
            if (m.whole > 0 && d.load(m.whole_entry, out)) {
                sf::fuzz::require(out.payload().size() <= size, "the payload lies inside the file");
                unsigned sum = 0;
                for (uint8_t b : out.payload()) sum += b;  // every byte readable
                sf::fuzz::require(sum <= 255u * out.payload().size(), "payload bytes");
            }
        }
    }
    fs::remove_all(dir);
    return 0;
}
