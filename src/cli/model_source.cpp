#include "cli/model_source.h"

#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "cli/serve_command.h"
#include "models/engine_registry.h"
#include "models/hub_client.h"
#include "models/model_store.h"
#include "models/progress_printer.h"
#include "util/log.h"
#include "util/paths.h"

namespace sf {

namespace {

std::atomic<bool> g_interrupted{false};

void on_sigint(int) {
    g_interrupted = true;
}

// SIGINT/SIGTERM set a flag the download polls, so Ctrl-C ends a pull cleanly with the
// partial file kept (restored to the previous handlers afterwards).
class interrupt_scope {
  public:
    interrupt_scope() {
        struct sigaction sa {};
        sa.sa_handler = on_sigint;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
        g_interrupted = false;
    }
    ~interrupt_scope() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }

  private:
    struct sigaction old_int_ {
    }, old_term_{};
};

bool truthy(const char *v) {
    if (!v) return false;
    std::string s(v);
    return s == "1" || s == "true" || s == "TRUE" || s == "yes" || s == "on";
}

}  // namespace

bool pull_with_progress(const models::model_store &st, const models::model_ref &ref,
                        models::model_entry &entry, models::pull_status &status,
                        std::string &error) {
    interrupt_scope scope;
    models::progress_printer bar;
    models::pull_events ev;
    ev.progress = [&](const models::repo_file &f, uint64_t done) {
        bar.update(f.path, done, f.size);
    };
    ev.note = [&](const std::string &s) {
        bar.finish();
        SF_LOG_INFO("pull", "%s", s.c_str());
    };
    ev.keep_going = [] { return !g_interrupted.load(); };
    status        = st.pull(ref, ev, entry, error);
    bar.finish();
    return status == models::pull_status::OK;
}

bool hub_offline() {
    return truthy(std::getenv("HF_HUB_OFFLINE")) || truthy(std::getenv("SUPERFLUID_OFFLINE"));
}

std::string served_model_name(const std::string &arg, const std::string &state_dir) {
    if (!arg.empty() && models::is_local_model_path(arg))
        return std::filesystem::path(arg).stem().string();
    models::store_options so;
    so.state_dir = state_dir.empty() ? paths::default_state_dir() : state_dir;
    models::model_store st(so);
    const std::string wanted = arg.empty() ? models::kDefaultModel : arg;
    if (auto e = st.find(wanted)) return e->name;
    if (!arg.empty()) return arg;  // pulled by serve, or refused there
    if (hub_offline()) return kEmbeddedModelName;
    // serve pulls the default model and falls back to the embedded one on any failure; a hub
    // that does not list it now is taken for one that would fail.
    auto ref               = models::parse_model_ref(wanted);
    models::hub_config cfg = so.hub;
    cfg.connect_timeout_s  = 3;
    models::repo_snapshot snap;
    std::string error;
    const auto status = models::hub_client(cfg).snapshot(ref->repo, ref->rev(), snap, error);
    return status == models::hub_status::OK ? wanted : kEmbeddedModelName;
}

static bool use_embedded(const std::string &state_dir, resolved_model &out) {
    std::string err;
    out.path = ensure_default_model(state_dir, err);
    if (out.path.empty()) {
        SF_LOG_ERROR("serve", "cannot write the embedded test model: %s", err.c_str());
        return false;
    }
    out.name           = std::filesystem::path(out.path).stem().string();
    out.random_weights = true;
    SF_LOG_WARN("serve",
                "serving the embedded test model: it has random weights, so its answers are "
                "random text");
    return true;
}

bool resolve_model_arg(const std::string &arg, const std::string &state_dir, resolved_model &out) {
    if (!arg.empty() && models::is_local_model_path(arg)) {
        std::string why = models::check_runnable(arg);
        if (!why.empty()) {
            SF_LOG_ERROR("serve", "%s", why.c_str());
            return false;
        }
        out.path = std::filesystem::absolute(arg).string();
        out.name = std::filesystem::path(arg).stem().string();
        return true;
    }
    const std::string wanted = arg.empty() ? models::kDefaultModel : arg;
    auto ref                 = models::parse_model_ref(wanted);
    if (!ref) {
        SF_LOG_ERROR("serve",
                     "\"%s\" is neither a model file nor a hub model (org/repo[:TAG][@rev])",
                     arg.c_str());
        return false;
    }
    models::store_options so;
    so.state_dir = state_dir;
    if (arg.empty()) so.hub.connect_timeout_s = 3;  // offline, fall back quickly
    models::model_store st(so);
    auto entry = st.find(wanted);
    if (!entry && !(arg.empty() && hub_offline())) {
        models::model_entry e;
        models::pull_status status;
        std::string error;
        if (!pull_with_progress(st, *ref, e, status, error)) {
            if (!arg.empty() || status == models::pull_status::INTERRUPTED) {
                SF_LOG_ERROR("pull", "%s: %s", wanted.c_str(), error.c_str());
                return false;
            }
            SF_LOG_WARN("serve", "cannot pull the default model %s: %s", models::kDefaultModel,
                        error.c_str());
        } else {
            entry = e;
        }
    }
    if (!entry) return use_embedded(state_dir, out);
    std::string why = models::check_runnable(entry->path);
    if (!why.empty()) {
        SF_LOG_ERROR("serve", "%s", why.c_str());
        return false;
    }
    out.path = entry->path;
    out.name = entry->name;
    return true;
}

}  // namespace sf
