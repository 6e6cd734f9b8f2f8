#include "http/stream_driver.h"

#include <cpp-httplib/httplib.h>

#include <chrono>

#include "http/route_util.h"
#include "http/session_ids.h"

namespace sf {

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

// Nothing written for this long: the encoder's keep-alive bytes (proxies and clients time out
// a silent stream during a long prefill).
constexpr auto k_idle = 10s;

// One streamed answer across content-provider calls.
struct stream_state {
    std::shared_ptr<session> s;
    std::unique_ptr<stream_encoder> enc;
    size_t cursor                     = 0;
    size_t first_cursor               = 0;  // > 0: a re-attached reader
    bool started                      = false;
    bool done                         = false;
    clock_type::time_point last_check = clock_type::now();
    clock_type::time_point last_write = clock_type::now();
};

bool write(stream_state &st, httplib::DataSink &sink, const std::string &bytes) {
    if (bytes.empty()) return true;
    st.last_write = clock_type::now();
    return sink.write(bytes.data(), bytes.size());
}

// A re-attached reader: the encoder catches up on the tokens the client already has.
void catch_up(stream_state &st) {
    std::vector<session_event> seen;
    std::optional<session_event> ignored;
    st.s->read(0, seen, ignored, 0ms);
    for (size_t i = 0; i < seen.size() && i < st.first_cursor; ++i) st.enc->skip(seen[i]);
}

// One step: waits briefly for events and writes them; false ends the stream.
bool step(stream_state &st, const httplib::Request &req, httplib::DataSink &sink) {
    if (!st.started) {
        st.started = true;
        if (st.first_cursor > 0) catch_up(st);
        if (!write(st, sink, st.enc->open(st.first_cursor > 0))) return false;
    }
    std::vector<session_event> evs;
    std::optional<session_event> fin;
    const bool got = st.s->read(st.cursor, evs, fin, 100ms);
    // A session that ended is written out first: the server's stop counts every connection as
    // closed, and a stream the shutdown ended still owes its client the error and the end.
    if (!fin && client_gone(req, st.last_check)) return false;
    if (!got) {
        if (clock_type::now() - st.last_write < k_idle) return true;
        const std::string keep_alive = st.enc->idle();
        if (keep_alive.empty()) st.last_write = clock_type::now();
        return write(st, sink, keep_alive);
    }
    for (const auto &ev : evs) {
        ++st.cursor;
        if (!write(st, sink, st.enc->token(ev, sse_event_id(st.s->id(), ev.index)))) return false;
        if (st.enc->ended()) {  // the client's own cap: the rest is not wanted
            st.s->cancel();
            st.done = true;
            sink.done();
            return true;
        }
    }
    if (!fin) return true;
    // The final frame's id is the completion-token count; a reader past it already has the end.
    const size_t final_index = static_cast<size_t>(std::max(0, fin->completion_tokens));
    const std::string end    = st.first_cursor > final_index
                                   ? st.enc->after_end()
                                   : st.enc->finish(*fin, sse_event_id(st.s->id(), final_index));
    if (!write(st, sink, end)) return false;
    st.done = true;
    sink.done();
    return true;
}

}  // namespace

void serve_session_stream(const httplib::Request &req, httplib::Response &res,
                          std::shared_ptr<session> s, std::unique_ptr<stream_encoder> enc,
                          size_t cursor, bool cancel_on_disconnect) {
    auto st          = std::make_shared<stream_state>();
    st->s            = std::move(s);
    st->enc          = std::move(enc);
    st->cursor       = cursor;
    st->first_cursor = cursor;
    const char *type = st->enc->content_type();
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        type,
        [st, &req, cancel_on_disconnect](size_t, httplib::DataSink &sink) {
            if (st->done) return false;
            const bool keep = step(*st, req, sink);
            if (!keep && cancel_on_disconnect) st->s->cancel();
            return keep;
        },
        [st, cancel_on_disconnect](bool success) {
            if ((!success || !st->done) && cancel_on_disconnect) st->s->cancel();
        });
}

}  // namespace sf
