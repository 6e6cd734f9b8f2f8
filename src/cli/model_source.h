// What a MODEL argument designates, for every command that takes one (serve, launch, pull):
// a local path (a .gguf file; other formats are refused by the engine registry), a hub
// reference `org/repo[:TAG][@rev]` (pulled when not in the store yet), or nothing: the default
// model models::kDefaultModel (models/model_ref.h) from the hub, falling back offline to the
// embedded test model.
#pragma once

#include <string>

#include "models/model_store.h"

namespace sf {

struct resolved_model {
    std::string path;             // absolute path the engine loads (first shard for split GGUFs)
    std::string name;             // the id clients see: "org/repo:QUANT" or the file's stem
    bool random_weights = false;  // the embedded test model
};

/**
 * Resolves `arg` ("" = default) into a loadable model, pulling from the hub with progress on
 * stderr when needed (Ctrl-C stops the pull, keeping the partial file). Returns false after
 * printing why to the log.
 */
bool resolve_model_arg(const std::string &arg, const std::string &state_dir, resolved_model &out);

/**
 * Pulls `ref` into `st` showing progress on stderr; Ctrl-C/SIGTERM during the pull stop it with
 * the partial file kept (status INTERRUPTED). False with `error` set when it fails.
 */
bool pull_with_progress(const models::model_store &st, const models::model_ref &ref,
                        models::model_entry &entry, models::pull_status &status,
                        std::string &error);

/**
 * The id `serve` would give the model `arg` ("" = default), decided as resolve_model_arg
 * decides but pulling and writing nothing: a local file's stem, a hub reference as pulled or
 * given, and for the default model the pulled one, else (HF_HUB_OFFLINE, or the hub does not
 * answer within 3 s) the embedded test model. For `launch --print` with no server running.
 */
std::string served_model_name(const std::string &arg, const std::string &state_dir);

/** True when HF_HUB_OFFLINE (or SUPERFLUID_OFFLINE) is set to a true value. */
bool hub_offline();

}  // namespace sf
