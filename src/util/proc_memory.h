// Memory figures of this machine and of a process, read from /proc (proc(5)): MemAvailable of
// /proc/meminfo, RssAnon of /proc/PID/status. Stateless; any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace sf {

/** MemAvailable (the kernel's estimate of memory available without swapping), bytes; -1. */
int64_t mem_available_bytes();

/**
 * A process's private resident memory (RssAnon: anonymous pages; file pages such as an
 * mmapped model are shared and not counted), bytes; -1 when `pid` ≤ 0 or unreadable.
 */
int64_t process_private_bytes(pid_t pid);

}  // namespace sf
