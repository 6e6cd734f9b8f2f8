#include "journal/journal_open.h"

#include <chrono>
#include <ctime>
#include <filesystem>

#include "util/log.h"

namespace sf::journal {

namespace fs = std::filesystem;

namespace {

std::string utc_stamp() {
    std::time_t t = std::time(nullptr);
    char b[32];
    std::strftime(b, sizeof b, "%Y%m%dT%H%M%SZ", std::gmtime(&t));
    return b;
}

// Moves the database and its WAL/shared-memory files aside; returns the new main path.
std::string move_aside(const std::string &path) {
    const std::string dest = path + ".corrupt-" + utc_stamp();
    for (const char *sfx : {"", "-wal", "-shm"}) {
        std::error_code ec;
        if (fs::exists(path + sfx, ec)) fs::rename(path + sfx, dest + sfx, ec);
        if (ec)
            SF_LOG_ERROR("journal", "cannot move %s%s aside: %s", path.c_str(), sfx,
                         ec.message().c_str());
    }
    return dest;
}

}  // namespace

namespace {

// Retention at start-up too: a server restarted after a long pause drops what expired.
std::unique_ptr<store> pruned(std::unique_ptr<store> db) {
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    if (size_t n = db->prune(now))
        SF_LOG_INFO("journal", "retention removed %zu finished sessions", n);
    return db;
}

}  // namespace

std::unique_ptr<store> open_journal(const options &o) {
    auto db = std::make_unique<store>();
    std::string err;
    if (db->open(o, err)) return pruned(std::move(db));
    db.reset();

    SF_LOG_ERROR("journal", "the journal %s is unreadable or damaged: %s", o.path.c_str(),
                 err.c_str());
    std::vector<stored_session> salvaged = store::salvage(o.path);
    const std::string aside              = move_aside(o.path);
    SF_LOG_ERROR("journal", "moved it aside to %s; starting a fresh journal", aside.c_str());

    db = std::make_unique<store>();
    if (!db->open(o, err)) {
        SF_LOG_ERROR("journal",
                     "cannot create a fresh journal at %s: %s; serving WITHOUT a journal "
                     "(tokens are not persisted, no resume after a restart)",
                     o.path.c_str(), err.c_str());
        return nullptr;
    }
    size_t tokens = 0;
    for (const auto &s : salvaged) tokens += s.tokens.size();
    size_t kept = db->import(salvaged);
    SF_LOG_WARN("journal", "recovered %zu sessions (%zu tokens) from the damaged journal", kept,
                tokens);
    return pruned(std::move(db));
}

}  // namespace sf::journal
