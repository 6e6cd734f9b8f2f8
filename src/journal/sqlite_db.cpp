#include "journal/sqlite_db.h"

#include "util/paths.h"

namespace sf::journal {

sqlite_stmt::sqlite_stmt(sqlite3 *db, const char *sql) {
    if (db && sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) st_ = nullptr;
}

sqlite_stmt::~sqlite_stmt() {
    if (st_) sqlite3_finalize(st_);
}

sqlite_stmt &sqlite_stmt::operator=(sqlite_stmt &&o) noexcept {
    if (this != &o) {
        if (st_) sqlite3_finalize(st_);
        st_   = o.st_;
        o.st_ = nullptr;
    }
    return *this;
}

sqlite_stmt &sqlite_stmt::reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
    return *this;
}

sqlite_stmt &sqlite_stmt::bind(int i, int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
}

sqlite_stmt &sqlite_stmt::bind_text(int i, const std::string &v) {
    sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
}

sqlite_stmt &sqlite_stmt::bind_blob(int i, const std::string &v) {
    // A zero-length blob, not NULL, for an empty string.
    sqlite3_bind_blob(st_, i, v.empty() ? "" : v.data(), static_cast<int>(v.size()),
                      SQLITE_TRANSIENT);
    return *this;
}

int sqlite_stmt::step() {
    return sqlite3_step(st_);
}

int64_t sqlite_stmt::col_int(int i) const {
    return sqlite3_column_int64(st_, i);
}

std::string sqlite_stmt::col_bytes(int i) const {
    const void *p = sqlite3_column_blob(st_, i);
    int n         = sqlite3_column_bytes(st_, i);
    return p ? std::string(static_cast<const char *>(p), static_cast<size_t>(n)) : std::string();
}

bool sqlite_stmt::col_null(int i) const {
    return sqlite3_column_type(st_, i) == SQLITE_NULL;
}

sqlite_db::~sqlite_db() {
    close();
}

bool sqlite_db::open(const std::string &path, bool readonly, std::string &err) {
    close();
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    flags |= SQLITE_OPEN_NOMUTEX;  // each connection is used by one thread at a time
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
        err = db_ ? sqlite3_errmsg(db_) : "out of memory";
        close();
        return false;
    }
    sqlite3_busy_timeout(db_, 5000);
    sqlite3_extended_result_codes(db_, 1);
    // Every prompt and answer is in it: this user's only, a file made by an older version too
    // (new ones are 0600 by the umask of serve and join).
    if (!readonly)
        for (const char *suffix : {"", "-wal", "-shm"}) paths::restrict_mode(path + suffix, 0600);
    return true;
}

void sqlite_db::close() {
    if (db_) sqlite3_close_v2(db_);
    db_ = nullptr;
}

bool sqlite_db::exec(const std::string &sql, std::string &err) {
    char *msg = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg) == SQLITE_OK) return true;
    err = msg ? msg : error();
    sqlite3_free(msg);
    return false;
}

std::string sqlite_db::query_text(const std::string &sql) {
    sqlite_stmt st(db_, sql.c_str());
    if (!st.ok() || st.step() != SQLITE_ROW) return {};
    return st.col_bytes(0);
}

int64_t sqlite_db::query_int(const std::string &sql, int64_t fallback) {
    sqlite_stmt st(db_, sql.c_str());
    if (!st.ok() || st.step() != SQLITE_ROW) return fallback;
    return st.col_int(0);
}

std::string sqlite_db::error() const {
    return db_ ? sqlite3_errmsg(db_) : "no database";
}

}  // namespace sf::journal
