// Which engine runs a model, chosen by the model's format (issue #8). GGUF files run on
// llama.cpp, the only engine in this build. Formats recognized but not runnable here get a
// clear refusal naming the engine they need; a new engine is one more row in the table
// (engine_registry.cpp) plus its implementation under src/engine/.
#pragma once

#include <string>

namespace sf::models {

enum class model_format {
    GGUF,     // a .gguf file (magic "GGUF")
    MLX,      // a directory with config.json and *.safetensors (mlx-lm / transformers layout)
    BASE,     // a ".base" package (file or directory)
    UNKNOWN,  // none of the above
};

struct engine_choice {
    model_format format = model_format::UNKNOWN;
    std::string format_name;  // "GGUF", "MLX (safetensors)", …
    std::string engine;       // "llama.cpp", "MLX", …; "" when no engine is known
    bool available = false;   // built into this binary
};

/** Detects the format of the file or directory at `path` (reads at most 4 bytes). */
model_format detect_format(const std::string &path);

/** The engine for the model at `path`. */
engine_choice choose_engine(const std::string &path);

/**
 * "" when this build can run the model at `path`; otherwise the message to show, e.g.
 * "… is an MLX model (config.json + safetensors): it needs the MLX engine, which this build
 * does not include".
 */
std::string check_runnable(const std::string &path);

}  // namespace sf::models
