// libFuzzer target: opening a damaged journal at start-up (journal/journal_open.h): the input is
// the database file's bytes. Whatever they are, the journal opens (salvaging what it can and
// moving the file aside) or runs without one; it never crashes, and each salvaged or resumable
// session's tokens are contiguous from index 0.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_require.h"
#include "fuzz_scratch.h"
#include "journal/journal_open.h"
#include "journal/journal_store.h"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const fs::path dir = sf::fuzz::fresh_scratch("journal");
    const fs::path db  = dir / "journal.db";
    std::ofstream(db, std::ios::binary)
        .write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
    sf::journal::options o;
    o.path = db.string();
    o.sync = sf::journal::sync_mode::OFF;
    for (const auto &s : sf::journal::store::salvage(o.path)) {
        for (size_t i = 0; i < s.tokens.size(); ++i)
            sf::fuzz::require(s.tokens[i].index == i, "salvaged tokens are contiguous from 0");
    }
    if (auto j = sf::journal::open_journal(o)) {
        for (const auto &s : j->unfinished()) {
            for (size_t i = 0; i < s.tokens.size(); ++i)
                sf::fuzz::require(s.tokens[i].index == i, "resumable tokens are contiguous from 0");
        }
        sf::fuzz::require(j->used_bytes() >= 0, "a size");
    }
    fs::remove_all(dir);
    return 0;
}
