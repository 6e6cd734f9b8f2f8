// Download progress for people: on a terminal (stderr is a TTY) one redrawn line per file with
// bytes, rate and ETA; otherwise (logs, CI, tests) a plain log line every 10% or 5 seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sf::models {

class progress_printer {
  public:
    /** `tty` = draw a bar (default: whether stderr is a terminal). */
    progress_printer();
    explicit progress_printer(bool tty);

    /** `file` has `completed` of `total` bytes. */
    void update(const std::string &file, uint64_t completed, uint64_t total);
    /** Ends the current bar line (before other output). */
    void finish();

  private:
    using clock = std::chrono::steady_clock;
    bool tty_;
    std::string file_;
    uint64_t start_bytes_ = 0, last_bytes_ = 0;
    int last_decile_ = -1;
    clock::time_point start_, last_draw_;
    bool open_line_ = false;
};

/** "1.5 GiB", "340.2 MiB", "12 B". */
std::string human_bytes(double bytes);

}  // namespace sf::models
