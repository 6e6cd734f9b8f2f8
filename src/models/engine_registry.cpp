#include "models/engine_registry.h"

#include <filesystem>
#include <fstream>

#include "models/gguf_info.h"

namespace sf::models {

namespace fs = std::filesystem;

namespace {

struct registry_row {
    model_format format;
    const char *format_name;
    const char *engine;
    bool available;
    const char *why;  // for unavailable engines: what it would take
};

// The engine registry. Order does not matter; one row per format.
const registry_row kEngines[] = {
    {model_format::GGUF, "GGUF", "llama.cpp", true, ""},
    {model_format::MLX, "MLX (config.json + safetensors)", "MLX", false,
     "MLX runs on Apple silicon; for this machine, use a GGUF build of the model (a -GGUF "
     "repository)"},
    {model_format::BASE, ".base package", "base", false,
     "no engine in this build reads .base packages; use a GGUF build of the model"},
};

bool ends_with(const std::string &s, const char *suffix) {
    std::string x(suffix);
    return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

const registry_row *row_for(model_format f) {
    for (const auto &r : kEngines)
        if (r.format == f) return &r;
    return nullptr;
}

}  // namespace

model_format detect_format(const std::string &path) {
    std::error_code ec;
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (ends_with(p, ".base")) return model_format::BASE;
    if (fs::is_directory(p, ec)) {
        bool config = fs::is_regular_file(p + "/config.json", ec), weights = false;
        for (auto it = fs::directory_iterator(p, ec); !ec && it != fs::end(it); it.increment(ec))
            weights = weights || it->path().extension() == ".safetensors";
        return config && weights ? model_format::MLX : model_format::UNKNOWN;
    }
    std::ifstream f(p, std::ios::binary);
    char magic[4] = {};
    if (f.read(magic, 4) && std::string(magic, 4) == "GGUF") return model_format::GGUF;
    return model_format::UNKNOWN;
}

engine_choice choose_engine(const std::string &path) {
    engine_choice c;
    c.format = detect_format(path);
    if (const auto *r = row_for(c.format)) {
        c.format_name = r->format_name;
        c.engine      = r->engine;
        c.available   = r->available;
    }
    return c;
}

std::string check_runnable(const std::string &path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return "model not found: " + path;
    auto c = choose_engine(path);
    if (c.available) return "";
    if (c.format == model_format::UNKNOWN && fs::is_directory(path, ec))
        return path +
               " is a directory with no model this build knows (a .gguf file, or MLX's "
               "config.json + *.safetensors)";
    if (c.format == model_format::UNKNOWN)
        return path + " is not a GGUF file (" + gguf_magic_problem(path) +
               "), the one format this build runs (llama.cpp)";
    return path + " is a model in the " + c.format_name + " format: it needs the " + c.engine +
           " engine, which this build does not include (" + row_for(c.format)->why + ")";
}

}  // namespace sf::models
