// A thread-safe localtime() for the whole program. llama.cpp's chat templates call
// std::localtime (common/chat.cpp format_time; Jinja's strftime_now, common/jinja/value.cpp),
// which fills one static struct tm per process, and the worker renders templates on many gRPC
// threads at once (issue #20 saw the race under ThreadSanitizer). The prebuilt llama.cpp cannot
// be changed to call localtime_r, so thread_local_time.cpp defines localtime itself (each
// thread gets its own struct tm, filled by localtime_r), and renders need no process-wide lock:
// one request's template or grammar no longer holds up every other (issue #38 item 4).
#pragma once

namespace sf {

/**
 * Does nothing; a call from the template code keeps thread_local_time.cpp (and with it the
 * localtime definition) in the link when the engine is a static library.
 */
void use_thread_local_time();

}  // namespace sf
