// Opening the journal at start-up, including a damaged one: never a crash loop.
#pragma once

#include <memory>

#include "journal/journal_store.h"

namespace sf::journal {

/**
 * Opens (or creates) the journal at `o.path`. A file that cannot be opened as a healthy
 * database is reported in the log, what can still be read from it is salvaged, the file (and
 * its -wal/-shm) is moved aside as `<path>.corrupt-<UTC time>` and a fresh journal holding the
 * salvaged sessions is started. Returns null only when no journal can be created at all
 * (logged; the server then runs without one).
 */
std::unique_ptr<store> open_journal(const options &o);

}  // namespace sf::journal
