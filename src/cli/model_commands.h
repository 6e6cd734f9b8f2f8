// `superfluid pull MODEL`, `superfluid list`, `superfluid rm MODEL…`: the model store from the
// command line (models/model_store.h). `state_dir` "" = the default state directory.
#pragma once

#include <string>
#include <vector>

namespace sf {

/** Pulls a hub model; exit code 0, 1 (failed) or 130 (interrupted, partial kept). */
int run_pull(const std::string &model, const std::string &state_dir);
/** True when `model` is a hub reference (org/repo[:TAG][@rev]) not pulled into the store yet. */
bool needs_pull(const std::string &model, const std::string &state_dir);
/**
 * True when `arg` designates a model: a local path (a .gguf name, or a file that exists), a
 * hub reference org/repo[:TAG][@rev], a pulled model's name, or "default". `run` takes an
 * argument that is none of these as its prompt.
 */
bool names_a_model(const std::string &arg, const std::string &state_dir);
/** Prints the pulled models as `ollama ls` does (NAME, ID, SIZE, MODIFIED), then their PATH. */
int run_list(const std::string &state_dir);
/** Removes pulled models; exit code 1 when one was not found. */
int run_rm(const std::vector<std::string> &models, const std::string &state_dir);

}  // namespace sf
