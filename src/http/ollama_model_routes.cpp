#include "http/ollama_model_routes.h"

#include <cpp-httplib/httplib.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "api/common/json_fields.h"
#include "api/ollama/ollama_response.h"
#include "http/error_reply.h"
#include "http/model_names.h"
#include "http/router.h"
#include "http/status_view.h"
#include "http/store_routes.h"

namespace sf {

using json = nlohmann::json;

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

// "42.3M", "7.6B": Ollama's parameter_size.
std::string human_params(uint64_t n) {
    char buf[32];
    if (n >= 1000000000ull)
        snprintf(buf, sizeof buf, "%.1fB", n / 1e9);
    else if (n >= 1000000ull)
        snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
    else
        snprintf(buf, sizeof buf, "%.1fK", n / 1e3);
    return buf;
}

// llama.cpp's "Q4_K - Medium" → Ollama's "Q4_K_M".
std::string quant_level(std::string ft) {
    auto dash = ft.find(" - ");
    if (dash == std::string::npos) return ft;
    std::string size = ft.substr(dash + 3), suffix;
    for (size_t i = 0; i < size.size(); ++i) {
        if (i == 0 || size[i - 1] == ' ') suffix += static_cast<char>(std::toupper(size[i]));
    }
    return ft.substr(0, dash) + "_" + suffix;
}

// Everything the listings say about the served model.
struct model_view {
    std::string name;
    file_facts file;
    model_description info;
    bool have_info = false;

    json details() const {
        const std::string fam = info.architecture;
        return {{"parent_model", ""},
                {"format", "gguf"},
                {"family", fam},
                {"families", fam.empty() ? json(nullptr) : json::array({fam})},
                {"parameter_size", have_info ? human_params(info.n_params) : ""},
                {"quantization_level", quant_level(info.file_type)}};
    }
    json listing() const {
        return {{"name", name},      {"model", name},         {"modified_at", file.modified_at},
                {"size", file.size}, {"digest", file.digest}, {"details", details()}};
    }
};

model_view view(const route_context &rc, const std::string &path) {
    model_view v;
    v.name      = ollama_model_name(rc.model_id);
    v.file      = read_file_facts(path);
    v.have_info = rc.sessions->model_info(v.info);
    return v;
}

// GGUF metadata as /api/show's model_info: numbers as numbers, the rest as strings.
json model_info_json(const model_description &info) {
    json mi = json::object();
    for (const auto &[k, v] : info.metadata) {
        json num = json::parse(v, nullptr, false);
        mi[k]    = !num.is_discarded() && (num.is_number() || num.is_boolean()) ? num : json(v);
    }
    mi["general.parameter_count"] = info.n_params;
    return mi;
}

// What the chat template can do, read from its source (Ollama derives capabilities from
// its template's variables the same way).
json capabilities(const std::string &tmpl) {
    json caps = json::array({"completion"});
    if (tmpl.find("tools") != std::string::npos) caps.push_back("tools");
    if (tmpl.find("<think>") != std::string::npos ||
        tmpl.find("enable_thinking") != std::string::npos ||
        tmpl.find("reasoning_content") != std::string::npos)
        caps.push_back("thinking");
    return caps;
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

    // The served model first, then the other models pulled into the store.
    svr.Get("/api/tags", [rc, path, state_dir](const httplib::Request &, httplib::Response &res) {
        json models = json::array({view(*rc, *path).listing()});
        if (!state_dir.empty())
            for (auto &m : pulled_model_tags(state_dir, rc->model_id)) models.push_back(m);
        res.set_content(fields::dump_json({{"models", models}}), "application/json");
    });

    svr.Post(
        "/api/show", [rc, path, shown_path](const httplib::Request &req, httplib::Response &res) {
            json j;
            api_error err;
            if (!fields::parse_object(req.body, j, err))
                return send_error(res, api_dialect::OLLAMA, 400, err.message);
            std::string name;
            if (!fields::string(j, "model", name, err) ||
                (name.empty() && !fields::string(j, "name", name, err)))
                return send_error(res, api_dialect::OLLAMA, 400, err.message);
            if (name.empty()) return send_error(res, api_dialect::OLLAMA, 400, "model is required");
            std::string why;
            if (!resolve_model(*rc, name, res, why, true))
                return send_error(res, api_dialect::OLLAMA, 404, why);
            model_view v = view(*rc, *path);
            if (!v.have_info)
                return send_error(res, api_dialect::OLLAMA, 503,
                                  "the model is not loaded yet; retry shortly");
            const std::string &tmpl = v.info.chat_template;
            json body               = {
                              {"modelfile", "# Modelfile generated by superfluid\nFROM " + shown_path + "\n"},
                              {"parameters", ""},
                              {"template", tmpl},
                              {"details", v.details()},
                              {"model_info", model_info_json(v.info)},
                              {"capabilities", capabilities(tmpl)},
                              {"modified_at", v.file.modified_at}};
            res.set_content(fields::dump_json(body), "application/json");
        });

    // Ollama's running-model list plus Superfluid's worker and sessions (superfluid ps).
    svr.Get("/api/ps", [rc, path, shown_path](const httplib::Request &req, httplib::Response &res) {
        session_manager &sessions = *rc->sessions;
        auto h                    = sessions.health();
        // A session's id only to who made it (with keys) or an admin (http/session_access.h).
        const auto caller = rc->access->of(req);
        json sess         = running_sessions_json(sessions, [&](const std::string &owner) {
            return rc->access->may_list(caller, owner);
        });
        model_view v      = view(*rc, *path);
        json model        = v.listing();
        // Never unloaded: Ollama shows a keep_alive of -1 as an expiry far in the future.
        model["expires_at"]     = "2318-01-01T00:00:00Z";
        model["size_vram"]      = 0;
        model["context_length"] = h.status.n_ctx;
        model["path"]           = shown_path;
        model["parallel"]       = h.status.n_parallel;
        model["kv_cache"]       = {{"type_k", h.status.cache_type_k},
                                   {"type_v", h.status.cache_type_v},
                                   {"bytes_per_token", h.status.kv_bytes_per_token}};
        model["speculation"]    = {{"drafted_tokens", h.status.spec_drafted_tokens},
                                   {"accepted_tokens", h.status.spec_accepted_tokens}};
        const auto w            = sessions.worker_stats();
        model["worker"]         = {{"ready", h.reachable && h.status.ready}, {"starts", w.starts}};
        if (rc->access->keyed())
            model["worker"]["pid"] = w.pid;  // a process id only to key holders
        res.set_content(fields::dump_json({{"models", json::array({model})}, {"sessions", sess}}),
                        "application/json");
    });
}

}  // namespace sf
