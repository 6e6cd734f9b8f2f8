// GET /v1/models in OpenAI's shape (https://platform.openai.com/docs/api-reference/models/list).
// Pure: ids in, body out. Any thread.
#pragma once

#include <string>
#include <vector>

#include "core/worker_report.h"

namespace sf {

/**
 * {"object": "list", "data": [{"id", "object": "model", "created": 0, "owned_by": "superfluid"},
 * ...]}, one entry per id in the given order. `created` is 0: a local file has no publication
 * time, and the SDKs only require the field to be an integer. With `input_modalities` (not
 * empty) each entry also carries "architecture": {"input_modalities": [...],
 * "output_modalities": ["text"]}, OpenRouter's field, which llama-server's router writes too and
 * clients (the pi coding agent) read to know whether a model takes images.
 */
std::string openai_models_body(const std::vector<std::string> &ids,
                               const std::vector<std::string> &input_modalities = {});

/** What `m` reads, in OpenRouter's names: "text", then "image" and "audio" from its projector. */
std::vector<std::string> input_modalities(const model_description &m);

}  // namespace sf
