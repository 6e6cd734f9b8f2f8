#include "http/store_routes.h"

#include <cpp-httplib/httplib.h>

#include <ctime>
#include <filesystem>
#include <memory>

#include "api/ollama/ollama_models.h"
#include "http/error_reply.h"
#include "http/router.h"
#include "models/model_store.h"
#include "util/log.h"

namespace sf {

namespace {

void ollama_error(httplib::Response &res, int status, const std::string &message) {
    send_error(res, api_dialect::OLLAMA, status, message);
}

// The model a request names and its "stream" flag; false after answering a 400.
bool read_model(const httplib::Request &req, httplib::Response &res, std::string &model,
                bool &stream) {
    api_error err;
    if (parse_ollama_model_request(req.body, model, stream, err)) return true;
    ollama_error(res, 400, err.message);
    return false;
}

int http_status(models::pull_status s) {
    switch (s) {
        case models::pull_status::NOT_FOUND:
            return 404;
        case models::pull_status::UNREACHABLE:
            return 502;
        default:
            return 500;
    }
}

// One pull's NDJSON lines, written from the pull's callbacks on the handler's thread.
struct pull_stream {
    httplib::DataSink *sink = nullptr;
    bool client_gone        = false;
    std::string last_file;
    uint64_t last_sent = 0;

    void line(const std::string &s) {
        if (client_gone) return;
        if (!sink->write(s.data(), s.size())) client_gone = true;
    }
    void progress(const models::repo_file &f, uint64_t done) {
        // At most one line per 256 KiB per file (plus its first and last), so a fast local
        // pull does not flood the client.
        if (f.path == last_file && done < f.size && done - last_sent < (256u << 10)) return;
        last_file          = f.path;
        last_sent          = done;
        std::string digest = "sha256:" + f.etag();
        line(ollama_progress_line(digest, f.size, done));
    }
};

}  // namespace

std::vector<ollama_model_entry> pulled_model_entries(const std::string &state_dir,
                                                     const std::string &exclude) {
    models::store_options so;
    so.state_dir = state_dir;
    std::vector<ollama_model_entry> out;
    for (const auto &m : models::model_store(so).list()) {
        if (m.name == exclude) continue;
        char when[40];
        time_t t = time_t(m.pulled_at);
        std::tm tm{};
        gmtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        std::error_code ec;  // the snapshot entry links to blobs/<sha256>
        std::string blob     = std::filesystem::read_symlink(m.path, ec).filename().string();
        ollama_model_entry e = ollama_entry(m.name, m.size, when, blob, nullptr);
        e.quantization_level = m.quant;
        out.push_back(std::move(e));
    }
    return out;
}

void register_store_routes(http_router &svr, const std::string &state_dir) {
    models::store_options so;
    so.state_dir = state_dir;
    auto st      = std::make_shared<models::model_store>(so);

    svr.Post("/api/pull", [st](const httplib::Request &req, httplib::Response &res) {
        std::string model;
        bool stream = true;
        if (!read_model(req, res, model, stream)) return;
        auto ref = models::parse_model_ref(model);
        if (!ref) {
            ollama_error(res, 400,
                         "\"" + model + "\" is not a hub model name (org/repo[:TAG][@rev])");
            return;
        }
        if (!stream) {
            models::model_entry e;
            std::string error;
            auto s = st->pull(*ref, {}, e, error);
            if (s != models::pull_status::OK) return ollama_error(res, http_status(s), error);
            res.set_content(ollama_status_line("success"), "application/json");
            return;
        }
        res.set_chunked_content_provider(
            "application/x-ndjson", [st, r = *ref, model](size_t, httplib::DataSink &sink) {
                pull_stream out;
                out.sink = &sink;
                models::pull_events ev;
                ev.status     = [&](const std::string &s) { out.line(ollama_status_line(s)); };
                ev.progress   = [&](const models::repo_file &f, uint64_t d) { out.progress(f, d); };
                ev.keep_going = [&] { return !out.client_gone && sink.is_writable(); };
                models::model_entry e;
                std::string error;
                auto s = st->pull(r, ev, e, error);
                if (s != models::pull_status::OK) {
                    SF_LOG_WARN("http", "/api/pull %s: %s", model.c_str(), error.c_str());
                    out.line(ollama_error_line(error));
                }
                sink.done();
                return true;
            });
    });

    svr.Delete("/api/delete", [st](const httplib::Request &req, httplib::Response &res) {
        std::string model;
        bool stream = true;
        if (!read_model(req, res, model, stream)) return;
        uint64_t freed = 0;
        std::string error;
        if (!st->remove(model, freed, error)) return ollama_error(res, 404, error);
        res.status = 200;
    });
}

}  // namespace sf
