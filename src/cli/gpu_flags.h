// The GPU offload flags serve and `cluster join` share (issue #41): --gpu-layers, --main-gpu,
// --tensor-split, as llama-server names them. Parsed into serve_options; the worker gets them
// on its command line (serve_command.cpp worker_argv). Called on the main thread while parsing.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/serve_command.h"

namespace sf {

/** Accepts auto, all or a layer count >= 0 (engine/llama/gpu_offload.h parse_gpu_layers). */
CLI::Validator gpu_layers_validator();

/** Accepts proportions per device, e.g. "3,1" (parse_tensor_split). */
CLI::Validator tensor_split_validator();

/** Adds --gpu-layers, --main-gpu and --tensor-split to `cmd`, stored in `opts`. */
void add_gpu_options(CLI::App &cmd, serve_options &opts);

}  // namespace sf
