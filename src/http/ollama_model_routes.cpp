#include "http/ollama_model_routes.h"

#include <cpp-httplib/httplib.h>
#include <openssl/sha.h>
#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "api/ollama/ollama_models.h"
#include "api/superfluid/status_view.h"
#include "http/error_reply.h"
#include "http/model_names.h"
#include "http/router.h"
#include "http/store_routes.h"

namespace sf {

namespace {

// The file's identity as Ollama-style fields. The digest hashes path, size and mtime (not
// the file's bytes: hashing a multi-GB model would stall the first request for seconds).
struct file_facts {
    uint64_t size = 0;
    std::string modified_at;
    std::string digest;
};

file_facts read_file_facts(const std::string &path) {
    file_facts f;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return f;
    f.size = static_cast<uint64_t>(st.st_size);
    std::tm tm{};
    gmtime_r(&st.st_mtime, &tm);
    char buf[40];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    f.modified_at  = buf;
    std::string id = path + "\n" + std::to_string(st.st_size) + "\n" + std::to_string(st.st_mtime);
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char *>(id.data()), id.size(), md);
    for (unsigned char c : md) {
        char h[3];
        snprintf(h, sizeof h, "%02x", c);
        f.digest += h;
    }
    return f;
}

// The default model's entry: its file's facts and, once the worker reports it, its description.
ollama_model_entry served_entry(const route_context &rc, const std::string &path,
                                model_description &info, bool &have_info) {
    have_info          = rc.sessions->model_info(info);
    const file_facts f = read_file_facts(path);
    return ollama_entry(ollama_model_name(rc.model_id), f.size, f.modified_at, f.digest,
                        have_info ? &info : nullptr);
}

// Another served model's entry: its file's facts (its worker may not be loaded).
ollama_model_entry other_entry(const served_model &m) {
    const file_facts f = read_file_facts(m.path);
    return ollama_entry(ollama_model_name(m.id), f.size, f.modified_at, f.digest, nullptr);
}

// RFC 3339 (UTC) of now + `ms`.
std::string rfc3339_in(int64_t ms) {
    const std::time_t t = std::time(nullptr) + static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[40];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// /api/ps' row of the default model: its worker's report and its entry.
ollama_running_model default_row(const route_context &rc, const std::string &path,
                                 const std::string &shown_path) {
    session_manager &sessions = *rc.sessions;
    const auto h              = sessions.health();
    model_description info;
    bool have_info = false;
    ollama_running_model r;
    r.entry              = served_entry(rc, path, info, have_info);
    r.path               = shown_path;
    r.context_length     = h.status.n_ctx;
    r.parallel           = h.status.n_parallel;
    r.cache_type_k       = h.status.cache_type_k;
    r.cache_type_v       = h.status.cache_type_v;
    r.kv_bytes_per_token = h.status.kv_bytes_per_token;
    r.drafted_tokens     = h.status.spec_drafted_tokens;
    r.accepted_tokens    = h.status.spec_accepted_tokens;
    r.ready              = h.reachable && h.status.ready;
    if (have_info && !info.devices.empty()) {
        r.devices    = info.devices;
        r.gpu_layers = info.gpu_layers;
        r.n_layers   = info.n_layers;
    }
    const auto w = sessions.worker_stats();
    r.starts     = w.starts;
    if (rc.access->keyed()) r.pid = w.pid;  // a process id only to key holders
    return r;
}

// /api/ps' rows with several models (placement/model_set.h): the resident ones and those
// requests wait for ("waiting": no room yet), each with its expiry and state; the default
// model's with its worker's report as with one model.
std::vector<ollama_running_model> resident_rows(const route_context &rc, const std::string &path,
                                                const std::string &shown_path,
                                                const std::vector<model_report> &models) {
    std::vector<ollama_running_model> rows;
    for (const auto &m : models) {
        if (m.state == "unloaded" && m.waiting == 0) continue;
        ollama_running_model r;
        if (m.is_default) {
            r = default_row(rc, path, shown_path);
        } else {
            r.entry = other_entry({m.id, m.path, ""});
            r.path =
                rc.access->keyed() ? m.path : std::filesystem::path(m.path).filename().string();
            r.ready  = m.state == "resident";
            r.starts = m.starts;
            if (rc.access->keyed() && m.pid > 0) r.pid = m.pid;
        }
        r.state    = m.state == "unloaded" ? "waiting" : m.state;  // requests wait for its load
        r.sessions = m.sessions;
        if (m.expires_in_ms >= 0) r.expires_at = rfc3339_in(m.expires_in_ms);
        rows.push_back(std::move(r));
    }
    return rows;
}

}  // namespace

std::string ollama_model_name(const std::string &model_id) {
    return model_id.find(':') == std::string::npos ? model_id + ":latest" : model_id;
}

void register_ollama_model_routes(http_router &svr, route_context ctx, std::string model_path,
                                  std::string state_dir) {
    auto rc = std::make_shared<const route_context>(std::move(ctx));
    // Without keys any local user may ask: the model's file name, not where it lies.
    const std::string shown_path =
        rc->access->keyed() ? model_path : std::filesystem::path(model_path).filename().string();
    auto path = std::make_shared<const std::string>(std::move(model_path));

    auto running = [](httplib::Response &res) {
        res.set_content("Ollama is running", "text/plain; charset=utf-8");
    };
    svr.Get("/", [running](const httplib::Request &, httplib::Response &res) { running(res); });
    // httplib answers HEAD through the GET handler, without the body.

    // The Ollama API level this server implements (clients gate features on it).
    svr.Get("/api/version", [](const httplib::Request &, httplib::Response &res) {
        res.set_content(R"({"version":"0.12.0"})", "application/json");
    });

    // The served models (the default first), then the other models pulled into the store.
    svr.Get("/api/tags", [rc, path, state_dir](const httplib::Request &, httplib::Response &res) {
        model_description info;
        bool have_info = false;
        std::vector<ollama_model_entry> models{served_entry(*rc, *path, info, have_info)};
        for (const auto &m : rc->models)
            if (m.id != rc->model_id) models.push_back(other_entry(m));
        if (!state_dir.empty())
            for (auto &m : pulled_model_entries(state_dir, rc->model_id))
                if (rc->model_of(m.name).empty()) models.push_back(m);
        res.set_content(ollama_tags_body(models), "application/json");
    });

    svr.Post("/api/show",
             [rc, path, shown_path](const httplib::Request &req, httplib::Response &res) {
                 std::string name;
                 bool stream = true;
                 api_error err;
                 if (!parse_ollama_model_request(req.body, name, stream, err))
                     return send_error(res, api_dialect::OLLAMA, 400, err.message);
                 std::string why;
                 if (!resolve_model(*rc, name, res, why, true))
                     return send_error(res, api_dialect::OLLAMA, 404, why);
                 model_description info;
                 bool have_info = false;
                 if (name != rc->model_id && name != ollama_model_name(rc->model_id)) {
                     // Another served model: its file's facts (its worker's description is
                     // not asked for: it may not be loaded).
                     for (const auto &m : rc->models)
                         if (name == m.id || name == ollama_model_name(m.id))
                             return res.set_content(ollama_show_body(other_entry(m), info, ""),
                                                    "application/json");
                 }
                 const auto m = served_entry(*rc, *path, info, have_info);
                 if (!have_info)
                     return send_error(res, api_dialect::OLLAMA, 503,
                                       "the model is not loaded yet; retry shortly");
                 res.set_content(ollama_show_body(m, info, shown_path), "application/json");
             });

    // Ollama's running-model list plus Superfluid's worker and sessions (superfluid ps): the
    // resident models (with several: placement/model_set.h), each with its expiry.
    svr.Get("/api/ps", [rc, path, shown_path](const httplib::Request &req, httplib::Response &res) {
        // A session's id only to who made it (with keys) or an admin (http/session_access.h).
        const auto caller = rc->access->of(req);
        const auto rows   = running_sessions_json(*rc->sessions, [&](const std::string &owner) {
            return rc->access->may_list(caller, owner);
        });
        const auto models = rc->sessions->models();
        const auto served =
            models.empty() ? std::vector<ollama_running_model>{default_row(*rc, *path, shown_path)}
                           : resident_rows(*rc, *path, shown_path, models);
        res.set_content(ollama_ps_body(served, rows), "application/json");
    });
}

}  // namespace sf
