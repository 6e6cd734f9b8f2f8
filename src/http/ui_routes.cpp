#include "http/ui_routes.h"

#include <cpp-httplib/httplib.h>

#include <atomic>
#include <memory>
#include <thread>

#include "api/superfluid/ui_snapshot.h"
#include "http/route_util.h"
#include "http/router.h"
#include "http/ui_page.h"

namespace sf {

namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

constexpr auto kSnapshotInterval = 1s;

// One /ui/events stream: when it last wrote, when it last checked its client.
struct ui_stream {
    clock::time_point last_write{};
    clock::time_point last_check{};
    bool first = true;
};

// Counts open streams; the slot is given back when the stream's provider is released.
struct stream_slot {
    explicit stream_slot(std::shared_ptr<std::atomic<int>> n) : n_(std::move(n)) {}
    ~stream_slot() { n_->fetch_sub(1); }
    stream_slot(const stream_slot &)            = delete;
    stream_slot &operator=(const stream_slot &) = delete;

  private:
    std::shared_ptr<std::atomic<int>> n_;
};

}  // namespace

void register_ui_routes(http_router &svr, session_manager &sessions, const std::string &model_id,
                        std::shared_ptr<const session_access> access) {
    auto source = std::make_shared<ui_snapshot_source>(sessions, model_id, access->keyed());
    auto open   = std::make_shared<std::atomic<int>>(0);

    auto page = [](const httplib::Request &, httplib::Response &res) {
        const auto html = ui_page_html();
        res.set_header("Cache-Control", "no-cache");
        res.set_content(html.data(), html.size(), "text/html; charset=utf-8");
    };
    svr.Get("/ui", page);
    svr.Get("/ui/", page);

    svr.Get("/ui/events",
            [source, open, access, &sessions](const httplib::Request &req, httplib::Response &res) {
                if (open->fetch_add(1) >= kMaxUiStreams) {
                    open->fetch_sub(1);
                    res.status = 503;
                    res.set_header("Retry-After", "5");
                    res.set_content("too many /ui/events streams open", "text/plain");
                    return;
                }
                auto slot = std::make_shared<stream_slot>(open);
                auto st   = std::make_shared<ui_stream>();
                // Which session ids this viewer may see (http/session_access.h), decided once.
                auto show_id = [access, caller = access->of(req)](const std::string &owner) {
                    return access->may_list(caller, owner);
                };
                res.set_header("Cache-Control", "no-cache");
                res.set_chunked_content_provider(
                    "text/event-stream",
                    [source, slot, st, show_id, &req, &sessions](size_t, httplib::DataSink &sink) {
                        // Wait for the next second in short steps, so a gone client or a server
                        // shutdown ends the stream promptly (shutdown joins this thread).
                        while (!st->first && clock::now() - st->last_write < kSnapshotInterval) {
                            if (sessions.shutting_down() || client_gone(req, st->last_check))
                                return false;
                            std::this_thread::sleep_for(50ms);
                        }
                        if (sessions.shutting_down()) return false;
                        if (st->first && !sink.write("retry: 2000\n\n", 13)) return false;
                        st->first      = false;
                        st->last_write = clock::now();
                        return write_sse_event(sink, "", source->get(show_id));
                    });
            });
}

}  // namespace sf
