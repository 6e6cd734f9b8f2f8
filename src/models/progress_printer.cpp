#include "models/progress_printer.h"

#include <unistd.h>

#include <cstdio>

#include "util/log.h"

namespace sf::models {

std::string human_bytes(double b) {
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u               = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        ++u;
    }
    char buf[32];
    snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
    return buf;
}

progress_printer::progress_printer() : progress_printer(isatty(STDERR_FILENO) == 1) {}
progress_printer::progress_printer(bool tty) : tty_(tty) {}

void progress_printer::update(const std::string &file, uint64_t completed, uint64_t total) {
    auto now = clock::now();
    if (file != file_) {
        finish();
        file_        = file;
        start_       = now;
        start_bytes_ = completed;
        last_decile_ = -1;
        last_draw_   = {};
    }
    last_bytes_    = completed;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    double rate    = elapsed > 0.2 ? double(completed - start_bytes_) / elapsed : 0;
    int pct        = total ? int(completed * 100 / total) : 100;
    bool done      = completed >= total;
    if (tty_) {
        if (!done && now - last_draw_ < std::chrono::milliseconds(100)) return;
        last_draw_   = now;
        char eta[32] = "--:--";
        if (rate > 0 && !done) {
            long s = long(double(total - completed) / rate);
            snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
        }
        const int width = 24;
        std::string bar(size_t(width * pct / 100), '#');
        bar.resize(width, '.');
        fprintf(stderr, "\r\033[K%s [%s] %3d%% %s/%s %s/s ETA %s", file.c_str(), bar.c_str(), pct,
                human_bytes(double(completed)).c_str(), human_bytes(double(total)).c_str(),
                human_bytes(rate).c_str(), done ? "0:00" : eta);
        open_line_ = true;
        if (done) finish();
        return;
    }
    int decile = pct / 10;
    if (decile == last_decile_ && now - last_draw_ < std::chrono::seconds(5)) return;
    last_decile_ = decile;
    last_draw_   = now;
    SF_LOG_INFO("pull", "%s: %d%% (%s of %s, %s/s)", file.c_str(), pct,
                human_bytes(double(completed)).c_str(), human_bytes(double(total)).c_str(),
                human_bytes(rate).c_str());
}

void progress_printer::finish() {
    if (open_line_) fputc('\n', stderr);
    open_line_ = false;
}

}  // namespace sf::models
