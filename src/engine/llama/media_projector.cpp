#include "engine/llama/media_projector.h"

#include <llama.h>
#include <mtmd-helper.h>
#include <mtmd.h>

#include <filesystem>
#include <stdexcept>

#include "util/log.h"

namespace sf {

media_projector::media_projector(const std::string &path, const llama_model *model, int threads,
                                 bool use_gpu) {
    if (!std::filesystem::exists(path))
        throw std::runtime_error("--mmproj: projector file not found: " + path);
    // mtmd and its CLIP loader log to stderr by default: through the engine's log instead (the
    // callback llama_engine installed in llama.cpp).
    ggml_log_callback log_cb = nullptr;
    void *log_data           = nullptr;
    llama_log_get(&log_cb, &log_data);
    mtmd_helper_log_set(log_cb, log_data);
    mtmd_context_params p = mtmd_context_params_default();
    p.use_gpu             = use_gpu;
    p.n_threads           = threads;
    p.print_timings       = false;
    ctx_                  = mtmd_init_from_file(path.c_str(), model, p);
    if (!ctx_)
        throw std::runtime_error("--mmproj " + path +
                                 ": mtmd cannot load it for this model (not a projector, or one "
                                 "made for a model of another embedding width; the log says)");
    vision_ = mtmd_support_vision(ctx_);
    audio_  = mtmd_support_audio(ctx_);
    SF_LOG_INFO("engine", "projector %s: vision %s, audio %s", path.c_str(), vision_ ? "yes" : "no",
                audio_ ? "yes" : "no");
}

media_projector::~media_projector() {
    if (ctx_) mtmd_free(ctx_);
}

}  // namespace sf
