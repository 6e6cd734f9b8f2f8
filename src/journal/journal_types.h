// What the token journal stores (docs/ARCHITECTURE.md, "Journal"): one row per session with
// everything needed to redo its request, one row per generated token. No JSON, no HTTP.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/session_event.h"
#include "core/worker_report.h"

namespace sf::journal {

/** Wall-clock time in milliseconds since the Unix epoch: the journal's timestamps. */
inline int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/** SQLite's `PRAGMA synchronous` for the journal
 * (https://sqlite.org/pragma.html#pragma_synchronous). */
enum class sync_mode {
    OFF,     // no fsync: survives a process crash only if the OS does not crash
    NORMAL,  // WAL + NORMAL: survives a crash of any process (fsync at checkpoints)
    FULL     // fsync at every commit: survives a power loss
};

/** "off" | "normal" | "full". */
const char *sync_mode_name(sync_mode m);

struct options {
    bool enabled = true;  // false: tokens are delivered without being journaled (benchmarks)
    std::string path;     // the database file (STATE/journal.db)
    sync_mode sync    = sync_mode::NORMAL;
    int64_t max_age_s = 7 * 24 * 3600;  // finished sessions older than this are removed
    int64_t max_bytes = 256ll << 20;    // above this, the oldest finished sessions are removed
    int64_t max_pages = 0;  // test only: PRAGMA max_page_count (simulates a full disk); 0 = none
};

/** A session row. `request` is the worker protocol's GenerateRequest, serialized. */
struct session_record {
    std::string id;
    std::string api;  // which adapter started it: "openai.chat", "openai.completion", …
    std::string model;
    int cls       = 1;  // priority_class as int
    uint64_t seed = 0;
    std::string request;  // GenerateRequest bytes (without resume tokens)
    int32_t prompt_tokens = 0;
    int32_t cached_tokens = 0;
    int64_t created_ms    = 0;  // unix milliseconds
    int64_t finished_ms   = 0;  // 0 while running
};

/** A session as read back: its row, its tokens in index order and, once finished, the end. */
struct stored_session {
    session_record rec;
    std::vector<session_event> tokens;
    std::optional<session_event> finish;
};

/** One write for the journal writer; `done(ok, error)` runs after it is committed (or not). */
struct op {
    enum class kind { BEGIN, TOKEN, FINISH, PLACEMENT } type = kind::TOKEN;
    std::string session;
    session_record rec;     // BEGIN
    session_event ev;       // TOKEN, FINISH
    placement_note placed;  // PLACEMENT
    std::function<void(bool ok, const std::string &error)> done;
};

/** "stop" | "length" | "cancelled" | "error" and back ("error" for anything unknown). */
const char *reason_name(finish_reason r);
finish_reason reason_from_name(const std::string &s);

}  // namespace sf::journal
