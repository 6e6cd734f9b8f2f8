#include "journal/journal_store.h"

#include <algorithm>

namespace sf::journal {

namespace {

// Schema version 1 (PRAGMA user_version). auto_vacuum must be chosen before the first table:
// INCREMENTAL lets retention give freed pages back to the file system.
constexpr const char *kSchema = R"sql(
PRAGMA auto_vacuum = INCREMENTAL;
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  api TEXT NOT NULL,
  model TEXT NOT NULL,
  class INTEGER NOT NULL,
  seed INTEGER NOT NULL,
  request BLOB NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL,  -- 0 at accept; the worker's count is set at finish
  created_ms INTEGER NOT NULL,
  finished_ms INTEGER,
  finish_reason TEXT,
  error TEXT,
  stop_string TEXT,
  finish_text BLOB,
  completion_tokens INTEGER
);
CREATE INDEX IF NOT EXISTS sessions_by_finish ON sessions (finished_ms);
CREATE TABLE IF NOT EXISTS tokens (
  session TEXT NOT NULL,
  idx INTEGER NOT NULL,
  token INTEGER NOT NULL,
  piece BLOB NOT NULL,
  text BLOB NOT NULL,
  PRIMARY KEY (session, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS placements (
  session TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  node TEXT NOT NULL,
  from_idx INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (session, epoch)
) WITHOUT ROWID;
PRAGMA user_version = 1;
)sql";

constexpr const char *kSessionCols =
    "id, api, model, class, seed, request, prompt_tokens, cached_tokens, created_ms, "
    "finished_ms, finish_reason, error, stop_string, finish_text, completion_tokens";

stored_session read_session_row(const sqlite_stmt &st) {
    stored_session s;
    auto &r         = s.rec;
    r.id            = st.col_bytes(0);
    r.api           = st.col_bytes(1);
    r.model         = st.col_bytes(2);
    r.cls           = static_cast<int>(st.col_int(3));
    r.seed          = static_cast<uint64_t>(st.col_int(4));
    r.request       = st.col_bytes(5);
    r.prompt_tokens = static_cast<int32_t>(st.col_int(6));
    r.cached_tokens = static_cast<int32_t>(st.col_int(7));
    r.created_ms    = st.col_int(8);
    if (!st.col_null(9)) {
        r.finished_ms = st.col_int(9);
        session_event f;
        f.type              = session_event::kind::FINISHED;
        f.reason            = reason_from_name(st.col_bytes(10));
        f.error             = st.col_bytes(11);
        f.stop_string       = st.col_bytes(12);
        f.text              = st.col_bytes(13);
        f.completion_tokens = static_cast<int32_t>(st.col_int(14));
        f.prompt_tokens     = r.prompt_tokens;
        f.cached_tokens     = r.cached_tokens;
        s.finish            = std::move(f);
    }
    return s;
}

// Reads `s`'s tokens in index order; stops at the first gap or read error (salvage).
void read_tokens(sqlite_db &db, stored_session &s) {
    auto st =
        db.prepare("SELECT idx, token, piece, text FROM tokens WHERE session = ? ORDER BY idx");
    if (!st.ok()) return;
    st.bind_text(1, s.rec.id);
    while (st.step() == SQLITE_ROW) {
        session_event ev;
        ev.index = static_cast<uint32_t>(st.col_int(0));
        if (ev.index != s.tokens.size()) break;
        ev.token = static_cast<token_id>(st.col_int(1));
        ev.piece = st.col_bytes(2);
        ev.text  = st.col_bytes(3);
        s.tokens.push_back(std::move(ev));
    }
}

}  // namespace

const char *sync_mode_name(sync_mode m) {
    switch (m) {
        case sync_mode::OFF:
            return "off";
        case sync_mode::FULL:
            return "full";
        default:
            return "normal";
    }
}

const char *reason_name(finish_reason r) {
    switch (r) {
        case finish_reason::STOP:
            return "stop";
        case finish_reason::LENGTH:
            return "length";
        case finish_reason::CANCELLED:
            return "cancelled";
        default:
            return "error";
    }
}

finish_reason reason_from_name(const std::string &s) {
    if (s == "stop") return finish_reason::STOP;
    if (s == "length") return finish_reason::LENGTH;
    if (s == "cancelled") return finish_reason::CANCELLED;
    return finish_reason::ERROR;
}

bool store::open(const options &o, std::string &err) {
    opts_ = o;
    if (!db_.open(o.path, false, err)) return false;
    // The first statement reads the header: a file that is not a database fails here.
    std::string pragmas =
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = " + std::string(sync_mode_name(o.sync)) +
        "; PRAGMA journal_size_limit = 4194304; PRAGMA foreign_keys = OFF;";
    if (!db_.exec(pragmas, err)) return false;
    std::string check = db_.query_text("PRAGMA quick_check");
    if (check != "ok") {
        err = check.empty() ? db_.error() : "integrity check failed: " + check;
        return false;
    }
    if (!db_.exec(kSchema, err)) return false;
    if (o.max_pages > 0 && !db_.exec("PRAGMA max_page_count = " + std::to_string(o.max_pages), err))
        return false;
    begin_       = db_.prepare("BEGIN IMMEDIATE");
    commit_      = db_.prepare("COMMIT");
    rollback_    = db_.prepare("ROLLBACK");
    ins_session_ = db_.prepare(
        "INSERT OR REPLACE INTO sessions (id, api, model, class, seed, request, prompt_tokens, "
        "cached_tokens, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    ins_token_ = db_.prepare(
        "INSERT OR IGNORE INTO tokens (session, idx, token, piece, text) VALUES (?, ?, ?, ?, ?)");
    ins_place_ = db_.prepare(
        "INSERT OR REPLACE INTO placements (session, epoch, node, from_idx, at_ms) "
        "VALUES (?, ?, ?, ?, ?)");
    upd_finish_ = db_.prepare(
        "UPDATE sessions SET finished_ms = ?, finish_reason = ?, error = ?, stop_string = ?, "
        "finish_text = ?, completion_tokens = ?, cached_tokens = max(cached_tokens, ?) "
        "WHERE id = ?");
    if (!begin_.ok() || !commit_.ok() || !rollback_.ok() || !ins_session_.ok() ||
        !ins_token_.ok() || !upd_finish_.ok() || !ins_place_.ok()) {
        err = db_.error();
        return false;
    }
    std::lock_guard lk(read_mu_);
    return rdb_.open(o.path, false, err) && rdb_.exec("PRAGMA foreign_keys = OFF", err);
}

bool store::write(const std::vector<op> &ops, std::string &err) {
    auto fail = [&] {
        err = db_.error();
        rollback_.reset().step();
        return false;
    };
    if (begin_.reset().step() != SQLITE_DONE) return fail();
    for (const op &o : ops) {
        int rc = SQLITE_DONE;
        if (o.type == op::kind::BEGIN) {
            const auto &r = o.rec;
            rc            = ins_session_.reset()
                     .bind_text(1, r.id)
                     .bind_text(2, r.api)
                     .bind_text(3, r.model)
                     .bind(4, r.cls)
                     .bind(5, static_cast<int64_t>(r.seed))
                     .bind_blob(6, r.request)
                     .bind(7, r.prompt_tokens)
                     .bind(8, r.cached_tokens)
                     .bind(9, r.created_ms)
                     .step();
        } else if (o.type == op::kind::TOKEN) {
            rc = ins_token_.reset()
                     .bind_text(1, o.session)
                     .bind(2, o.ev.index)
                     .bind(3, o.ev.token)
                     .bind_blob(4, o.ev.piece)
                     .bind_blob(5, o.ev.text)
                     .step();
        } else if (o.type == op::kind::PLACEMENT) {
            rc = ins_place_.reset()
                     .bind_text(1, o.session)
                     .bind(2, static_cast<int64_t>(o.placed.epoch))
                     .bind_text(3, o.placed.node)
                     .bind(4, o.placed.from_index)
                     .bind(5, o.placed.at_ms)
                     .step();
        } else {
            const auto &f = o.ev;
            rc            = upd_finish_.reset()
                     .bind(1, o.rec.finished_ms)
                     .bind_text(2, reason_name(f.reason))
                     .bind_text(3, f.error)
                     .bind_text(4, f.stop_string)
                     .bind_blob(5, f.text)
                     .bind(6, f.completion_tokens)
                     .bind(7, f.cached_tokens)
                     .bind_text(8, o.session)
                     .step();
        }
        if (rc != SQLITE_DONE) return fail();
    }
    if (commit_.reset().step() != SQLITE_DONE) return fail();
    return true;
}

size_t store::import(const std::vector<stored_session> &sessions) {
    size_t n = 0;
    for (const auto &s : sessions) {
        std::vector<op> ops;
        op b;
        b.type = op::kind::BEGIN;
        b.rec  = s.rec;
        ops.push_back(std::move(b));
        for (const auto &t : s.tokens) {
            op o;
            o.session = s.rec.id;
            o.ev      = t;
            ops.push_back(std::move(o));
        }
        if (s.finish) {
            op f;
            f.type            = op::kind::FINISH;
            f.session         = s.rec.id;
            f.ev              = *s.finish;
            f.rec.finished_ms = s.rec.finished_ms;
            ops.push_back(std::move(f));
        }
        std::string err;
        if (write(ops, err)) ++n;
    }
    return n;
}

namespace {
int64_t bytes_in_use(sqlite_db &db) {
    return (db.query_int("PRAGMA page_count", 0) - db.query_int("PRAGMA freelist_count", 0)) *
           db.query_int("PRAGMA page_size", 4096);
}
}  // namespace

int64_t store::used_bytes() {
    return bytes_in_use(db_);
}

int64_t store::used_bytes_read() {
    std::lock_guard lk(read_mu_);
    return bytes_in_use(rdb_);
}

size_t store::prune(int64_t now_ms) {
    size_t removed = 0;
    auto remove    = [&](const std::string &where, int64_t arg) {
        std::string err;
        if (!db_.exec("BEGIN IMMEDIATE", err)) return size_t{0};
        auto ids = db_.prepare(("SELECT id FROM sessions WHERE " + where).c_str());
        ids.bind(1, arg);
        std::vector<std::string> victims;
        while (ids.step() == SQLITE_ROW) victims.push_back(ids.col_bytes(0));
        auto dt = db_.prepare("DELETE FROM tokens WHERE session = ?");
        auto ds = db_.prepare("DELETE FROM sessions WHERE id = ?");
        auto dp = db_.prepare("DELETE FROM placements WHERE session = ?");
        for (const auto &id : victims) {
            dt.reset().bind_text(1, id).step();
            dp.reset().bind_text(1, id).step();
            ds.reset().bind_text(1, id).step();
        }
        if (!db_.exec("COMMIT", err)) {
            db_.exec("ROLLBACK", err);
            return size_t{0};
        }
        return victims.size();
    };
    removed +=
        remove("finished_ms IS NOT NULL AND finished_ms < ?", now_ms - opts_.max_age_s * 1000);
    // Oldest finished first, a few at a time, until the rows fit the size limit.
    while (used_bytes() > opts_.max_bytes) {
        size_t n = remove("finished_ms IS NOT NULL ORDER BY finished_ms LIMIT ?", 8);
        if (n == 0) break;
        removed += n;
    }
    if (removed > 0) {
        std::string err;
        db_.exec("PRAGMA incremental_vacuum", err);
    }
    return removed;
}

std::vector<placement_note> store::placements(const std::string &id) {
    std::lock_guard lk(read_mu_);
    std::vector<placement_note> out;
    auto st = rdb_.prepare(
        "SELECT epoch, node, from_idx, at_ms FROM placements WHERE session = ? ORDER BY epoch");
    if (!st.ok()) return out;
    st.bind_text(1, id);
    while (st.step() == SQLITE_ROW) {
        placement_note p;
        p.epoch      = static_cast<uint64_t>(st.col_int(0));
        p.node       = st.col_bytes(1);
        p.from_index = st.col_int(2);
        p.at_ms      = st.col_int(3);
        out.push_back(std::move(p));
    }
    return out;
}

std::vector<stored_session> store::unfinished() {
    std::vector<stored_session> out;
    std::lock_guard lk(read_mu_);
    auto st = rdb_.prepare((std::string("SELECT ") + kSessionCols +
                            " FROM sessions WHERE finished_ms IS NULL ORDER BY created_ms")
                               .c_str());
    while (st.ok() && st.step() == SQLITE_ROW) out.push_back(read_session_row(st));
    for (auto &s : out) read_tokens(rdb_, s);
    return out;
}

std::optional<stored_session> store::load(const std::string &id) {
    std::lock_guard lk(read_mu_);
    auto st = rdb_.prepare(
        (std::string("SELECT ") + kSessionCols + " FROM sessions WHERE id = ?").c_str());
    if (!st.ok()) return std::nullopt;
    st.bind_text(1, id);
    if (st.step() != SQLITE_ROW) return std::nullopt;
    stored_session s = read_session_row(st);
    read_tokens(rdb_, s);
    return s;
}

std::vector<stored_session> store::salvage(const std::string &path) {
    std::vector<stored_session> out;
    sqlite_db db;
    std::string err;
    if (!db.open(path, true, err)) return out;
    auto st = db.prepare((std::string("SELECT ") + kSessionCols + " FROM sessions").c_str());
    while (st.ok() && st.step() == SQLITE_ROW) out.push_back(read_session_row(st));
    for (auto &s : out) read_tokens(db, s);
    // A finished session whose tokens are not all readable is kept as unfinished: resuming it
    // recomputes the missing tail rather than serving a short text as complete.
    for (auto &s : out) {
        if (s.finish && static_cast<int32_t>(s.tokens.size()) != s.finish->completion_tokens) {
            s.finish.reset();
            s.rec.finished_ms = 0;
        }
    }
    return out;
}

}  // namespace sf::journal
