// GPU offload for llama_engine (issue #41): which ggml devices the build has, how many of the
// model's layers go to them (--gpu-layers N|auto, --main-gpu, --tensor-split, as llama-server
// names them) and a line saying where the model runs. Called on the loading thread only,
// before the tick loop starts; gpu_summary() from any thread (it reads ggml's registry).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct llama_context_params;
struct llama_model_params;

namespace sf {

/** Layers on GPU devices: llama-server's -ngl, with auto as its default. */
struct gpu_options {
    // -1 auto: as many layers as the devices' free memory holds after the KV cache and
    // compute buffers, with a 1 GiB margin per device (llama.cpp common_fit_params, what
    // llama-server's default --fit does); 0: none (CPU only); N: the last N layers (llama.cpp
    // counts the output layer as one more, so n_layer + 1 is every layer).
    int32_t layers   = -1;
    int32_t main_gpu = 0;             // the device of a model that is not split (-sm none)
    std::vector<float> tensor_split;  // proportions per device; empty: by free memory
};

/** Parses --gpu-layers: "auto", "all" (every layer) or a count >= 0. False on anything else. */
bool parse_gpu_layers(const std::string &text, int32_t &layers);

/** Parses --tensor-split "3,1" into proportions. False on a negative or non-number. */
bool parse_tensor_split(const std::string &text, std::vector<float> &split);

/** Number of GPU devices (discrete or integrated) ggml found in this process. */
size_t gpu_device_count();

/**
 * The build's backends and devices, e.g. "CPU, Vulkan; devices: Vulkan0 llvmpipe (LLVM 15.0.6,
 * 256 bits) 2048 MiB" or "CPU; devices: none beside the CPU", for --version and the logs.
 */
std::string gpu_summary();

/** Where one model's layers went, for the log, /api/ps and the worker's report. */
struct offload_result {
    int32_t gpu_layers = 0;  // layers on GPU devices (llama.cpp's count, output layer included)
    int32_t n_layers   = 0;  // every offloadable layer: n_layer + 1
    std::string devices;     // "Vulkan0 (llvmpipe ...)" or "CPU"
    std::string why;         // how the count was chosen (auto's fit, a flag, no device)
};

/**
 * Sets mp.n_gpu_layers, main_gpu and tensor_split from `g` (mp keeps pointing into `split`,
 * which must outlive the load). With auto and a GPU present, runs llama.cpp's fit on
 * `model_path` with `cp` (n_ctx fixed: only the layer count moves). Returns what was decided;
 * the layer count is final once the model is loaded with `n_layer` (offload_done).
 */
offload_result plan_offload(const std::string &model_path, const gpu_options &g,
                            llama_model_params &mp, llama_context_params &cp,
                            std::vector<float> &split);

/** Completes `r` with the loaded model's layer count (n_layer) and returns the log line. */
std::string offload_done(offload_result &r, int32_t n_layer, int32_t n_gpu_layers_param);

/** Free bytes on the GPU devices (0 without one): the KV budget's base when offloading. */
int64_t gpu_free_bytes();

}  // namespace sf
