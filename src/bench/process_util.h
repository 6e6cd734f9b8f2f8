// Linux process and machine facts for the bench: /proc scans, RSS, vmstat, checksums, spawn.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sf::bench {

/** The NUL-separated argv of `pid` joined with spaces ("" when gone). */
std::string proc_cmdline(pid_t pid);

/** Direct children of `pid` (by scanning /proc/<n>/stat for the parent id). */
std::vector<pid_t> proc_children(pid_t pid);

/** Peak resident set (VmHWM) of `pid` in MiB; 0 when unreadable. */
double proc_peak_rss_mib(pid_t pid);

/** CPU time `pid` has used (user + system, /proc/PID/stat fields 14 and 15), seconds; 0. */
double proc_cpu_seconds(pid_t pid);

/** Engine processes on the machine (superfluid serve/worker, llama-server), except `exclude`. */
std::vector<pid_t> engine_processes(const std::vector<pid_t> &exclude);

/** Swap counters from /proc/vmstat. */
struct swap_counters {
    uint64_t pswpin  = 0;
    uint64_t pswpout = 0;
};
swap_counters read_swap_counters();

/** SHA-256 of a file as lowercase hex; "" when unreadable. */
std::string sha256_file(const std::string &path);

/** Machine facts: kernel, CPU model, cores, memory. */
nlohmann::json machine_info();

/** Runs a command, returns its first output line (trimmed); "" on failure. */
std::string first_output_line(const std::string &command);

/**
 * Starts `argv` with stdout/stderr appended to `log_path` in its own process group.
 * Returns the pid (-1 on failure).
 */
pid_t spawn_process(const std::vector<std::string> &argv, const std::string &log_path);

/** A free TCP port on 127.0.0.1 (0 on failure). */
int free_port();

}  // namespace sf::bench
