#include "util/relay_sched.h"

#if defined(__linux__)
#include <sched.h>
#endif

namespace sf {

void relay_scheduling(bool on) {
#if defined(__linux__)
    // The class is remembered per thread; a new thread learns it once (it inherits its
    // creator's class, which may be batch).
    thread_local int batch = -1;
    if (batch < 0) batch = sched_getscheduler(0) == SCHED_BATCH ? 1 : 0;
    if ((batch == 1) == on) return;
    sched_param p{};
    p.sched_priority = 0;
    // pid 0: the calling thread (Linux applies scheduling policies per thread).
    if (sched_setscheduler(0, on ? SCHED_BATCH : SCHED_OTHER, &p) == 0) batch = on ? 1 : 0;
#else
    (void)on;
#endif
}

}  // namespace sf
