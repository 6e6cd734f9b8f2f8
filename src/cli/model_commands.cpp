#include "cli/model_commands.h"

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "cli/model_source.h"
#include "cli/show_command.h"
#include "models/model_store.h"
#include "models/progress_printer.h"
#include "util/log.h"
#include "util/paths.h"

namespace sf {

static models::model_store open_store(const std::string &state_dir) {
    models::store_options so;
    so.state_dir = state_dir.empty() ? paths::default_state_dir() : state_dir;
    return models::model_store(so);
}

bool needs_pull(const std::string &model, const std::string &state_dir) {
    return models::parse_model_ref(model) && !models::is_local_model_path(model) &&
           !open_store(state_dir).find(model);
}

bool names_a_model(const std::string &arg, const std::string &state_dir) {
    return arg == "default" || models::is_local_model_path(arg) ||
           models::parse_model_ref(arg).has_value() || open_store(state_dir).find(arg).has_value();
}

int run_pull(const std::string &model, const std::string &state_dir) {
    auto ref = models::parse_model_ref(model);
    if (!ref && models::is_local_model_path(model)) {
        fprintf(stderr, "superfluid pull: %s is a local path; serve it as it is\n", model.c_str());
        return 1;
    }
    if (!ref) {
        fprintf(stderr, "superfluid pull: \"%s\" is not a hub model (org/repo[:TAG][@rev])\n",
                model.c_str());
        return 1;
    }
    auto st = open_store(state_dir);
    models::model_entry e;
    models::pull_status status;
    std::string error;
    if (!pull_with_progress(st, *ref, e, status, error)) {
        fprintf(stderr, "superfluid pull %s: %s\n", model.c_str(), error.c_str());
        return status == models::pull_status::INTERRUPTED ? 130 : 1;
    }
    printf("pulled %s (%s, %zu file%s, commit %.12s)\n%s\n", e.name.c_str(),
           models::human_bytes(double(e.size)).c_str(), e.files.size(),
           e.files.size() == 1 ? "" : "s", e.commit.c_str(), e.path.c_str());
    return 0;
}

// Ollama's ID column: the first 12 hex digits of the file's blob (its SHA-256 in the HF cache).
static std::string model_id(const std::string &path) {
    std::error_code ec;
    const std::string blob = std::filesystem::canonical(path, ec).filename().string();
    if (ec || blob.size() != 64 || blob.find_first_not_of("0123456789abcdef") != std::string::npos)
        return "-";
    return blob.substr(0, 12);
}

int run_list(const std::string &state_dir) {
    auto models = open_store(state_dir).list();
    printf("%-40s %-12s %-10s %-20s %s\n", "NAME", "ID", "SIZE", "MODIFIED", "PATH");
    const int64_t now = int64_t(time(nullptr));
    for (const auto &m : models) {
        printf("%-40s %-12s %-10s %-20s %s\n", m.name.c_str(), model_id(m.path).c_str(),
               models::human_bytes(double(m.size)).c_str(), time_ago(now - m.pulled_at).c_str(),
               m.path.c_str());
    }
    if (models.empty()) printf("(no models pulled yet: superfluid pull org/repo[:TAG])\n");
    return 0;
}

int run_rm(const std::vector<std::string> &models, const std::string &state_dir) {
    auto st = open_store(state_dir);
    int rc  = 0;
    for (const auto &m : models) {
        uint64_t freed = 0;
        std::string error;
        if (!st.remove(m, freed, error)) {
            fprintf(stderr, "superfluid rm: %s\n", error.c_str());
            rc = 1;
            continue;
        }
        printf("deleted %s (%s freed)\n", m.c_str(), models::human_bytes(double(freed)).c_str());
    }
    return rc;
}

}  // namespace sf
