#include "engine/llama/thread_local_time.h"

#include <time.h>

// Replaces the C library's localtime for this program (the executable's definition is the one
// every reference binds to, llama.cpp's included): the same answer, in a struct tm of the
// calling thread's own instead of one shared by all threads.
extern "C" struct tm *localtime(const time_t *t) noexcept {
    thread_local struct tm result;
    return localtime_r(t, &result);
}

namespace sf {

void use_thread_local_time() {}

}  // namespace sf
