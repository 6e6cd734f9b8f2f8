#include "engine/llama/gpu_offload.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "fit.h"
#include "ggml-backend.h"
#include "llama.h"

namespace sf {

namespace {

bool is_gpu(ggml_backend_dev_t d) {
    const auto t = ggml_backend_dev_type(d);
    return t == GGML_BACKEND_DEVICE_TYPE_GPU || t == GGML_BACKEND_DEVICE_TYPE_IGPU;
}

std::vector<ggml_backend_dev_t> gpu_devices() {
    std::vector<ggml_backend_dev_t> out;
    for (size_t i = 0; i < ggml_backend_dev_count(); ++i)
        if (ggml_backend_dev_t d = ggml_backend_dev_get(i); is_gpu(d)) out.push_back(d);
    return out;
}

std::string device_name(ggml_backend_dev_t d) {
    return std::string(ggml_backend_dev_name(d)) + " (" + ggml_backend_dev_description(d) + ")";
}

}  // namespace

bool parse_gpu_layers(const std::string &text, int32_t &layers) {
    if (text == "auto") return layers = -1, true;
    if (text == "all") return layers = 100000, true;  // clamped by llama.cpp to n_layer + 1
    int32_t n     = 0;
    const auto r  = std::from_chars(text.data(), text.data() + text.size(), n);
    const bool ok = r.ec == std::errc() && r.ptr == text.data() + text.size() && n >= 0;
    if (ok) layers = n;
    return ok;
}

bool parse_tensor_split(const std::string &text, std::vector<float> &split) {
    std::vector<float> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end       = std::min(text.find_first_of(",/", start), text.size());
        const std::string part = text.substr(start, end - start);
        char *stop             = nullptr;
        const float v          = std::strtof(part.c_str(), &stop);
        if (part.empty() || *stop != '\0' || !(v >= 0)) return false;
        out.push_back(v);
        start = end + 1;
    }
    if (out.size() > llama_max_devices()) return false;
    split = std::move(out);
    return true;
}

size_t gpu_device_count() {
    return gpu_devices().size();
}

std::string gpu_summary() {
    std::string s;
    for (size_t i = 0; i < ggml_backend_reg_count(); ++i)
        s += (i ? ", " : "") + std::string(ggml_backend_reg_name(ggml_backend_reg_get(i)));
    s += "; devices: ";
    const auto gpus = gpu_devices();
    if (gpus.empty()) s += "none beside the CPU";
    for (size_t i = 0; i < gpus.size(); ++i) {
        size_t free = 0, total = 0;
        ggml_backend_dev_memory(gpus[i], &free, &total);
        s += (i ? ", " : "") + device_name(gpus[i]) + " " + std::to_string(total >> 20) + " MiB";
    }
    return s;
}

int64_t gpu_free_bytes() {
    int64_t sum = 0;
    for (ggml_backend_dev_t d : gpu_devices()) {
        size_t free = 0, total = 0;
        ggml_backend_dev_memory(d, &free, &total);
        sum += static_cast<int64_t>(free);
    }
    return sum;
}

offload_result plan_offload(const std::string &model_path, const gpu_options &g,
                            llama_model_params &mp, llama_context_params &cp,
                            std::vector<float> &split) {
    offload_result r;
    const auto gpus = gpu_devices();
    for (size_t i = 0; i < gpus.size(); ++i) r.devices += (i ? ", " : "") + device_name(gpus[i]);
    if (gpus.empty()) {
        mp.n_gpu_layers = 0;
        r.devices       = "CPU";
        r.why           = "no GPU device";
        return r;
    }
    mp.main_gpu = g.main_gpu;
    split.assign(llama_max_devices(), 0.0f);
    std::copy(g.tensor_split.begin(), g.tensor_split.end(), split.begin());
    mp.tensor_split = g.tensor_split.empty() ? nullptr : split.data();
    if (g.layers >= 0) {
        mp.n_gpu_layers = g.layers;
        r.why           = "--gpu-layers " + std::to_string(g.layers);
        return r;
    }
    // auto: llama.cpp's fit moves only what still has its default value (n_gpu_layers -1,
    // tensor_split all zero); n_ctx is set, so it keeps the context and lowers the layers.
    mp.n_gpu_layers = -1;
    std::vector<llama_model_tensor_buft_override> overrides(llama_max_tensor_buft_overrides());
    std::vector<size_t> margins(llama_max_devices(), size_t(1) << 30);
    const auto status =
        common_fit_params(model_path.c_str(), &mp, &cp, split.data(), overrides.data(),
                          margins.data(), cp.n_ctx, nullptr, GGML_LOG_LEVEL_ERROR);
    mp.tensor_split = split.data();
    // The fit leaves overrides empty unless it split MoE experts; no model here needs them.
    mp.tensor_buft_overrides = nullptr;
    r.why                    = status == COMMON_PARAMS_FIT_STATUS_SUCCESS
                                   ? "auto: fitted to free device memory (1 GiB margin per device)"
                                   : "auto: the fit found no allocation that fits; every layer offloaded";
    if (status == COMMON_PARAMS_FIT_STATUS_ERROR) mp.n_gpu_layers = -1;
    return r;
}

std::string offload_done(offload_result &r, int32_t n_layer, int32_t n_gpu_layers_param) {
    r.n_layers   = n_layer + 1;
    r.gpu_layers = r.devices == "CPU"       ? 0
                   : n_gpu_layers_param < 0 ? r.n_layers
                                            : std::min(n_gpu_layers_param, r.n_layers);
    return "offloaded " + std::to_string(r.gpu_layers) + "/" + std::to_string(r.n_layers) +
           " layers to " + (r.gpu_layers > 0 ? r.devices : std::string("no GPU (CPU)")) + " (" +
           r.why + ")";
}

}  // namespace sf
