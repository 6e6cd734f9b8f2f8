// media_projector: a model's multimodal projector, an "mmproj" GGUF beside the model (serve
// --mmproj FILE), loaded through llama.cpp's mtmd (tools/mtmd). It says which media the model
// takes (vision, audio) for ModelInfo, /api/show and /v1/models, and holds the mtmd context that
// turns an image into embeddings the text model reads in place of tokens (issue #42; how an
// image travels through the server: docs/ARCHITECTURE.md, "Images").
// Threads: built and destroyed by the thread that owns the engine. vision() and audio() are
// constant after construction (any thread). mtmd's tokenizing is thread-safe; its encoding is
// not, and belongs to the thread that decodes (the tick thread).
#pragma once

#include <string>

struct llama_model;
struct mtmd_context;

namespace sf {

class media_projector {
  public:
    /**
     * Loads the projector at `path` for `model`, encoding on `threads` CPU threads, on the GPU
     * when `use_gpu` and ggml has one. Throws std::runtime_error with a readable message when
     * the file is missing or mtmd refuses it (not a projector; its output width differs from
     * the model's embedding width: a projector made for another model).
     */
    media_projector(const std::string &path, const llama_model *model, int threads, bool use_gpu);
    ~media_projector();
    media_projector(const media_projector &)            = delete;
    media_projector &operator=(const media_projector &) = delete;

    /** True when it encodes images. */
    bool vision() const { return vision_; }
    /** True when it encodes audio. */
    bool audio() const { return audio_; }
    /** The mtmd context (owned here; see the thread rules above). */
    mtmd_context *context() const { return ctx_; }

  private:
    mtmd_context *ctx_ = nullptr;
    bool vision_       = false;
    bool audio_        = false;
};

}  // namespace sf
