// mmproj: writes a tiny random vision projector (an "mmproj" GGUF) for a model mkmodel writes,
// so image tests run offline through llama.cpp's mtmd.
//
// The projector is LLaVA's layout, projector type "mlp" in the pinned tree's clip.cpp
// (tools/mtmd/models/llava.cpp): a CLIP-style ViT (patch embedding by a strided convolution,
// learnt position embeddings, pre-norm transformer blocks with GELU) whose penultimate layer's
// patch features pass through a two-layer MLP (mm.0, GELU, mm.2) into the text model's
// embedding width. mtmd resizes every image to one fixed square (no tiles, no begin/end marker
// tokens, ordinary positions), so every image is exactly projector_image_tokens() embeddings:
// a number the tests can assert. It works with any text architecture mkmodel writes (qwen3's
// NEOX RoPE included), unlike the Qwen2-VL merger, which needs M-RoPE in the text model.
//
// Weights come from the same seeded generator as the model's (gguf_fill.h): the same options
// write the same file, byte for byte. All tensors are F32 (about 0.4 MB for "tiny").
// Plain functions; any thread may call them.
#pragma once

#include <cstdint>
#include <string>

#include "mkmodel.h"

namespace sf::mkmodel {

/// Side of the square every image is resized to, pixels (clip.vision.image_size).
inline constexpr uint32_t k_projector_image_size = 96;
/// Side of a patch, pixels (clip.vision.patch_size): one patch becomes one embedding.
inline constexpr uint32_t k_projector_patch_size = 16;

/// Embeddings (text-model positions) one image takes: (image size / patch size)^2 = 36.
constexpr uint32_t projector_image_tokens() {
    return (k_projector_image_size / k_projector_patch_size) *
           (k_projector_image_size / k_projector_patch_size);
}

/// Writes a projector for the text model `opt` describes (its embedding width, from
/// embedding_length(opt); the architecture and tokenizer do not matter) to `out_path`,
/// atomically (a temporary name beside it, then a rename), creating missing directories.
/// `opt.seed` seeds the weights. Returns "" on success, else a message (unknown preset,
/// I/O failure); on error no file is left at `out_path`. Takes a few milliseconds.
std::string write_projector(const options &opt, const std::string &out_path);

/// The name written to the projector's general.name, e.g. "superfluid-tiny-mmproj-s1".
std::string projector_name(const options &opt);

}  // namespace sf::mkmodel
