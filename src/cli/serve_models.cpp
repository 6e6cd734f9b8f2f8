#include "cli/serve_models.h"

#include <cctype>
#include <filesystem>

#include "models/gguf_info.h"
#include "placement/local_worker.h"
#include "placement/model_set.h"
#include "util/go_duration.h"
#include "util/log.h"

namespace sf {

namespace {

// True when `name` designates `m` given as `arg` on the command line.
bool designates(const std::string &name, const std::string &arg, const resolved_model &m) {
    const std::filesystem::path p(m.path);
    return name == m.name || name == arg || name == m.path || name == p.filename().string() ||
           name == p.stem().string();
}

// Model `m`'s worker options: the context capped at its training context; a draft model only
// for the default (another model's tokenizer may differ from the draft's).
serve_options options_for(const serve_options &opts, const std::string &path, bool is_default) {
    serve_options o = opts;
    cap_ctx_size(o, path);
    if (!is_default) {
        o.model_draft.clear();
        if (o.spec_type == "draft") o.spec_type = "none";
    }
    return o;
}

}  // namespace

bool resolve_served_models(const serve_options &opts, served_models &out) {
    std::vector<std::string> args = opts.models;
    if (args.empty()) args.push_back(opts.model);
    for (const auto &arg : args) {
        resolved_model r;
        if (!resolve_model_arg(arg, opts.state_dir, r)) return false;
        for (const auto &other : out.list)
            if (other.name == r.name) {
                SF_LOG_ERROR("serve", "two models have the id '%s' (%s and %s)", r.name.c_str(),
                             other.path.c_str(), r.path.c_str());
                return false;
            }
        models::gguf_summary s;
        std::string error;
        out.general_names.push_back(models::read_gguf_summary(r.path, s, error) ? s.name : "");
        out.list.push_back(std::move(r));
    }
    if (opts.default_model.empty()) return true;
    for (size_t i = 0; i < out.list.size(); ++i)
        if (designates(opts.default_model, args[i], out.list[i])) {
            out.default_index = i;
            return true;
        }
    SF_LOG_ERROR("serve", "--default-model '%s' is none of the served models",
                 opts.default_model.c_str());
    return false;
}

bool parse_keep_alive_flag(const std::string &text, std::chrono::milliseconds &out) {
    double seconds = 0;
    size_t end     = 0;
    bool number    = false;
    try {
        seconds = std::stod(text, &end);
        number  = end == text.size() && !text.empty() &&
                 !std::isalpha(static_cast<unsigned char>(text[0]));
    } catch (const std::exception &) {
    }
    if (!number && !parse_go_duration(text, seconds)) return false;
    if (!(seconds == seconds)) return false;  // NaN
    out = seconds < 0 || seconds > 9e15 ? std::chrono::milliseconds(-1)
                                        : std::chrono::milliseconds(int64_t(seconds * 1000));
    return true;
}

std::unique_ptr<worker_client> make_model_workers(const serve_options &opts,
                                                  const served_models &models,
                                                  const std::string &socket, standby_mode standby) {
    const size_t d = models.default_index;
    if (models.list.size() == 1) {
        auto argv = worker_argv(options_for(opts, models.list[0].path, true), models.list[0].path);
        argv.insert(argv.end(), {"--socket", socket});
        return std::make_unique<local_worker>(argv, socket, 0, standby);
    }
    std::vector<model_set::model> list;
    std::vector<std::vector<std::string>> argvs;
    std::vector<std::string> sockets;
    const std::string stem = socket.substr(0, socket.rfind(".sock"));
    for (size_t i = 0; i < models.list.size(); ++i) {
        const auto &m = models.list[i];
        list.push_back({m.name, m.path});
        sockets.push_back(i == d ? socket : stem + "-m" + std::to_string(i) + ".sock");
        auto argv = worker_argv(options_for(opts, m.path, i == d), m.path);
        argv.insert(argv.end(), {"--socket", sockets.back()});
        argvs.push_back(std::move(argv));
    }
    model_set::options o;
    o.keep_alive = std::chrono::milliseconds(opts.keep_alive_ms);
    o.max_models = opts.max_models;
    SF_LOG_INFO("serve",
                "serving %zu models (default '%s'); others load on first use, unload after "
                "%lld ms idle%s",
                list.size(), list[d].id.c_str(), static_cast<long long>(opts.keep_alive_ms),
                opts.max_models > 0
                    ? (", at most " + std::to_string(opts.max_models) + " resident").c_str()
                    : "");
    auto make = [argvs, sockets, d, standby](size_t i, uint64_t base) {
        return std::make_unique<local_worker>(argvs[i], sockets[i], base,
                                              i == d ? standby : standby_mode::off);
    };
    return std::make_unique<model_set>(std::move(list), d, make, o);
}

}  // namespace sf
