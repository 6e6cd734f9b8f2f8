// The journal's SQLite database (WAL mode): schema, the batched write transaction, reads for
// recovery and re-attaching clients, and retention. See docs/ARCHITECTURE.md, "Journal".
// Thread-safety: write(), prune() and import() from one thread (the journal writer); the
// read functions from any thread (they use a second connection under a mutex).
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "journal/journal_types.h"
#include "journal/sqlite_db.h"

namespace sf::journal {

class store {
  public:
    /**
     * Opens or creates the database at `o.path` and checks it (PRAGMA quick_check). False
     * with `err` set when the file cannot be opened, is not a database or is damaged.
     */
    bool open(const options &o, std::string &err);

    /** Applies `ops` in one transaction (all or nothing); false with `err` (e.g. disk full). */
    bool write(const std::vector<op> &ops, std::string &err);
    /** Copies salvaged sessions into this (fresh) database; returns how many were written. */
    size_t import(const std::vector<stored_session> &sessions);
    /**
     * Retention: removes finished sessions older than max_age_s, then the oldest finished ones
     * while the data exceeds max_bytes. Returns how many sessions were removed.
     */
    size_t prune(int64_t now_ms);

    /** Sessions that have not finished, oldest first (to resume after a head restart). */
    std::vector<stored_session> unfinished();
    /** One session with its tokens; nullopt when unknown (or removed by retention). */
    std::optional<stored_session> load(const std::string &id);
    /** Where session `id` ran: its placements by epoch (empty when unknown). Any thread. */
    std::vector<placement_note> placements(const std::string &id);
    /** Bytes in use by rows (pages minus free pages, times page size). Writer thread. */
    int64_t used_bytes();
    /** used_bytes() from any thread (the readers' connection), for status pages. */
    int64_t used_bytes_read();

    /**
     * Best effort on a damaged file: every session row and its contiguous tokens from 0 that can
     * still be read (none when the header is unreadable). Never throws.
     */
    static std::vector<stored_session> salvage(const std::string &path);

  private:
    options opts_;
    sqlite_db db_;  // writer thread
    sqlite_stmt begin_, commit_, rollback_, ins_session_, ins_token_, upd_finish_, ins_place_;
    std::mutex read_mu_;
    sqlite_db rdb_;  // readers
};

}  // namespace sf::journal
