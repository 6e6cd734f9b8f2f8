// A thin RAII layer over the SQLite C API (libsqlite3): one connection, prepared statements,
// errors as values. Not thread-safe: one connection is used by one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace sf::journal {

/** A prepared statement; reset and rebound for each use. */
class sqlite_stmt {
  public:
    sqlite_stmt() = default;
    sqlite_stmt(sqlite3 *db, const char *sql);
    ~sqlite_stmt();
    sqlite_stmt(const sqlite_stmt &)            = delete;
    sqlite_stmt &operator=(const sqlite_stmt &) = delete;
    sqlite_stmt(sqlite_stmt &&o) noexcept : st_(o.st_) { o.st_ = nullptr; }
    sqlite_stmt &operator=(sqlite_stmt &&o) noexcept;

    bool ok() const { return st_ != nullptr; }
    /** Resets the statement and clears its bindings (call before binding a new row). */
    sqlite_stmt &reset();
    /** Binds parameter `i` (1-based). Text and blobs are copied by SQLite. */
    sqlite_stmt &bind(int i, int64_t v);
    sqlite_stmt &bind_text(int i, const std::string &v);
    sqlite_stmt &bind_blob(int i, const std::string &v);
    /** Steps once: SQLITE_ROW, SQLITE_DONE or an error code. */
    int step();
    int64_t col_int(int i) const;
    /** Text or blob column `i` (0-based) as bytes; "" when NULL. */
    std::string col_bytes(int i) const;
    bool col_null(int i) const;

  private:
    sqlite3_stmt *st_ = nullptr;
};

/** One SQLite connection. */
class sqlite_db {
  public:
    sqlite_db() = default;
    ~sqlite_db();
    sqlite_db(const sqlite_db &)            = delete;
    sqlite_db &operator=(const sqlite_db &) = delete;

    /**
     * Opens `path` (`readonly`: never creates or writes it). Returns false with `err` set; a
     * busy database is waited on for up to 5 s.
     */
    bool open(const std::string &path, bool readonly, std::string &err);
    void close();
    /** Runs one or more statements without results; false with `err` set on failure. */
    bool exec(const std::string &sql, std::string &err);
    /** The first column of the first row of `sql` as text ("" on error or no row). */
    std::string query_text(const std::string &sql);
    /** The first column of the first row of `sql` as an integer (`fallback` on error/no row). */
    int64_t query_int(const std::string &sql, int64_t fallback = -1);
    sqlite_stmt prepare(const char *sql) { return sqlite_stmt(db_, sql); }
    /** The connection's last error message. */
    std::string error() const;
    sqlite3 *handle() { return db_; }

  private:
    sqlite3 *db_ = nullptr;
};

}  // namespace sf::journal
