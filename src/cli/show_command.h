// `superfluid show MODEL`: what a model is, read from its GGUF header (models/gguf_info.h), as
// `ollama show` prints it: architecture, parameters, context length, embedding length,
// quantization, then the file. MODEL: a .gguf path, a pulled model's name, or `default`.
#pragma once

#include <string>

namespace sf {

/** Prints `model`'s facts; 1 with a message when it is not found or not a readable GGUF. */
int run_show(const std::string &model, const std::string &state_dir);

/** "5 minutes ago", "3 days ago", … for `seconds` in the past (Ollama's MODIFIED column). */
std::string time_ago(int64_t seconds);

}  // namespace sf
