// The models `superfluid serve A B C` serves (issue #40): each argument resolved as the single
// model is (cli/model_source.h: a file, a hub reference pulled when missing, the default), the
// default among them (the first, or --default-model), and the worker client that serves them:
// with one model a local_worker as before; with several a placement/model_set of one
// local_worker per model (its own socket and argv; the hot standby only for the default).
// Called on serve's main thread before the server starts.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cli/model_source.h"
#include "cli/serve_command.h"
#include "placement/worker_process.h"
#include "session/worker_client.h"

namespace sf {

/** The served models, resolved. */
struct served_models {
    std::vector<resolved_model> list;        // in the order given; ids unique
    std::vector<std::string> general_names;  // each file's GGUF general.name ("" when absent)
    size_t default_index = 0;                // the one answering unknown names
    const resolved_model &default_model() const { return list[default_index]; }
};

/**
 * Resolves `opts.models` (or `opts.model` when empty) and picks the default
 * (`opts.default_model`: a served model's id, argument, path, file name or stem). False after
 * logging why: a model that cannot be resolved, two models with the same id, a
 * --default-model that names none of them.
 */
bool resolve_served_models(const serve_options &opts, served_models &out);

/**
 * Parses --keep-alive: Ollama's syntax, a Go duration ("5m", "30s", "1h30m", "0") or a number
 * of seconds ("-1": never). False when `text` is neither.
 */
bool parse_keep_alive_flag(const std::string &text, std::chrono::milliseconds &out);

/**
 * The worker client serving `models` with `opts` (ctx capped per model). `socket`: the
 * default model's unix socket (others get "<socket stem>-m<index>.sock"); `standby`: the
 * default model's hot standby mode (other models run without one).
 */
std::unique_ptr<worker_client> make_model_workers(const serve_options &opts,
                                                  const served_models &models,
                                                  const std::string &socket, standby_mode standby);

}  // namespace sf
