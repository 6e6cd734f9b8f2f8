// Ollama's model-management bodies (https://github.com/ollama/ollama/blob/main/docs/api.md):
// /api/tags, /api/show, /api/ps, and the request and NDJSON lines of /api/pull and
// /api/delete. Pure: facts in, JSON text out; the HTTP edge (http/ollama_model_routes,
// http/store_routes) gathers the facts and routes. Any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/common/api_error.h"
#include "core/worker_report.h"

namespace sf {

/** One model as /api/tags lists it (and /api/show, /api/ps describe it). */
struct ollama_model_entry {
    std::string name;                // "org/repo:TAG" or "<id>:latest"
    uint64_t size = 0;               // bytes of the file
    std::string modified_at;         // RFC 3339, UTC
    std::string digest;              // hex
    std::string family;              // the GGUF architecture; "" when unknown
    std::string parameter_size;      // "42.3M" (ollama_parameter_size); "" when unknown
    std::string quantization_level;  // "Q4_K_M" (ollama_quantization_level)
};

/** A parameter count as Ollama's parameter_size: "7.6B", "42.3M", "0.5K". */
std::string ollama_parameter_size(uint64_t n);

/** llama.cpp's file type "Q4_K - Medium" as Ollama's quantization_level "Q4_K_M". */
std::string ollama_quantization_level(const std::string &llama_file_type);

/** The served model's entry from its description (family, sizes, quantization). */
ollama_model_entry ollama_entry(std::string name, uint64_t size, std::string modified_at,
                                std::string digest, const model_description *info);

/** GET /api/tags' body: {"models": [entry, ...]} in the given order. */
std::string ollama_tags_body(const std::vector<ollama_model_entry> &models);

/**
 * A model-naming request body (/api/show, /api/pull, /api/delete): `model`, or the older
 * `name` when `model` is absent or ""; `stream` (default true). 400 when the body is not a JSON
 * object, a field has the wrong type, or no name is given ("model is required").
 */
bool parse_ollama_model_request(const std::string &body, std::string &model, bool &stream,
                                api_error &err);

/**
 * POST /api/show's body: modelfile (FROM `shown_path`), template, details, model_info (GGUF
 * metadata: numbers as numbers, the rest as strings, plus general.parameter_count),
 * capabilities ("vision" with a projector that takes images; "tools", "thinking" read from the
 * chat template's source), modified_at.
 */
std::string ollama_show_body(const ollama_model_entry &m, const model_description &info,
                             const std::string &shown_path);

/** What /api/ps says of a running model beyond its entry (Superfluid's own fields included). */
struct ollama_running_model {
    ollama_model_entry entry;
    std::string path;  // the file, as much of it as the caller may see
    int32_t context_length = 0, parallel = 0;
    std::string cache_type_k, cache_type_v;
    int64_t kv_bytes_per_token = 0;
    int64_t drafted_tokens = 0, accepted_tokens = 0;
    bool ready     = false;
    int64_t starts = 0;
    std::optional<int64_t> pid;   // the worker's process id, only to key holders
    std::string devices = "CPU";  // where the layers run (model_description::devices)
    int32_t gpu_layers = 0, n_layers = 0;
    // With several models (placement/model_set.h): when it unloads (RFC 3339; the far future
    // for one that never does), its residency state and its unfinished sessions (-1: unknown).
    std::string expires_at = "2318-01-01T00:00:00Z";
    std::string state;
    int32_t sessions = -1;
};

/**
 * GET /api/ps' body: {"models": [...], "sessions": `sessions`} (a JSON array of session rows,
 * api/superfluid/status_view.h). A model that never unloads is shown (as Ollama shows
 * keep_alive -1) with an expiry far in the future; size_vram is the weights' share on GPU devices
 * (size × layers offloaded / layers, as Ollama estimates it), 0 on the CPU; "gpu" says which
 * devices.
 */
std::string ollama_ps_body(const std::vector<ollama_running_model> &models,
                           const nlohmann::json &sessions);

/** /api/pull NDJSON: {"status": s} and a newline. */
std::string ollama_status_line(const std::string &status);

/** /api/pull NDJSON: {"status": "downloading <digest>", "digest", "total", "completed"}. */
std::string ollama_progress_line(const std::string &digest, uint64_t total, uint64_t completed);

/** /api/pull NDJSON's last line on failure: {"error": message} and a newline. */
std::string ollama_error_line(const std::string &message);

}  // namespace sf
