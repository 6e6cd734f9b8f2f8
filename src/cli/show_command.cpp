#include "cli/show_command.h"

#include <cstdio>
#include <filesystem>

#include "cli/serve_command.h"
#include "models/engine_registry.h"
#include "models/gguf_info.h"
#include "models/model_ref.h"
#include "models/model_store.h"
#include "models/progress_printer.h"
#include "util/paths.h"

namespace sf {

namespace fs = std::filesystem;

namespace {

// The file `model` designates, without pulling: a local path, a pulled model, or for
// "default" the pulled default model, else the embedded test model (written when missing).
bool model_file(const std::string &model, const std::string &state_dir, std::string &path,
                std::string &name, std::string &error) {
    if (models::is_local_model_path(model)) {
        path = model;
        name = fs::path(model).stem().string();
        return true;
    }
    models::store_options so;
    so.state_dir = state_dir;
    models::model_store st(so);
    const bool dflt = model == "default";
    if (auto e = st.find(dflt ? models::kDefaultModel : model)) {
        path = e->path;
        name = e->name;
        return true;
    }
    if (dflt) {
        path = ensure_default_model(state_dir, error);
        name = fs::path(path).stem().string();
        return !path.empty();
    }
    error = models::parse_model_ref(model)
                ? model + " is not pulled yet: superfluid pull " + model
                : "\"" + model + "\" is neither a model file nor a pulled model (superfluid list)";
    return false;
}

void row(const char *key, const std::string &value) {
    if (!value.empty() && value != "0") printf("    %-20s%s\n", key, value.c_str());
}

}  // namespace

std::string time_ago(int64_t s) {
    struct unit {
        int64_t seconds;
        const char *name;
    };
    static const unit units[] = {{365 * 86400, "year"}, {30 * 86400, "month"}, {7 * 86400, "week"},
                                 {86400, "day"},        {3600, "hour"},        {60, "minute"}};
    if (s < 60) return "less than a minute ago";
    for (const auto &u : units) {
        // Days up to two weeks, weeks up to two months, as Ollama's humanized times.
        if (s < 2 * u.seconds && u.seconds >= 7 * 86400) continue;
        if (s >= u.seconds) {
            const int64_t n = s / u.seconds;
            return std::to_string(n) + " " + u.name + (n == 1 ? "" : "s") + " ago";
        }
    }
    return "less than a minute ago";
}

int run_show(const std::string &model, const std::string &state_dir_in) {
    const std::string state_dir = state_dir_in.empty() ? paths::default_state_dir() : state_dir_in;
    std::string path, name, error;
    if (!model_file(model, state_dir, path, name, error)) {
        fprintf(stderr, "superfluid show: %s\n", error.c_str());
        return 1;
    }
    if (std::string why = models::check_runnable(path); !why.empty()) {
        fprintf(stderr, "superfluid show: %s\n", why.c_str());
        return 1;
    }
    models::gguf_summary s;
    if (!models::read_gguf_summary(path, s, error)) {
        fprintf(stderr, "superfluid show: %s\n", error.c_str());
        return 1;
    }
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    printf("  Model\n");
    row("architecture", s.architecture);
    row("parameters", models::format_parameter_count(s.parameters));
    row("context length", std::to_string(s.context_length));
    row("embedding length", std::to_string(s.embedding_length));
    row("quantization", s.quantization);
    printf("\n  File\n");
    row("name", name);
    row("path", fs::absolute(path).string());
    row("size", ec ? "" : models::human_bytes(double(size)));
    printf("\n");
    return 0;
}

}  // namespace sf
