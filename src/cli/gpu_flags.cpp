#include "cli/gpu_flags.h"

#include "engine/llama/gpu_offload.h"

namespace sf {

CLI::Validator gpu_layers_validator() {
    return CLI::Validator(
        [](std::string &text) {
            int32_t n = 0;
            return parse_gpu_layers(text, n) ? std::string()
                                             : "expected auto, all or a layer count, got " + text;
        },
        "auto|all|N");
}

CLI::Validator tensor_split_validator() {
    return CLI::Validator(
        [](std::string &text) {
            std::vector<float> split;
            return parse_tensor_split(text, split)
                       ? std::string()
                       : "expected non-negative proportions per GPU such as 3,1, got " + text;
        },
        "P0,P1,...");
}

void add_gpu_options(CLI::App &cmd, serve_options &opts) {
    cmd.add_option("--gpu-layers", opts.gpu_layers,
                   "Layers on the GPU: auto (as many as its memory holds beside the KV cache), "
                   "all, or a count; 0 keeps the model on the CPU. Without a GPU: CPU")
        ->capture_default_str()
        ->check(gpu_layers_validator());
    cmd.add_option("--main-gpu", opts.main_gpu, "The GPU of a model not split across GPUs")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--tensor-split", opts.tensor_split,
                   "Share of the layers per GPU, e.g. 3,1 (default: by free memory)")
        ->check(tensor_split_validator());
}

}  // namespace sf
