// GET /v1/models in OpenAI's shape (https://platform.openai.com/docs/api-reference/models/list).
// Pure: ids in, body out. Any thread.
#pragma once

#include <string>
#include <vector>

namespace sf {

/**
 * {"object": "list", "data": [{"id", "object": "model", "created": 0, "owned_by": "superfluid"},
 * ...]}, one entry per id in the given order. `created` is 0: a local file has no publication
 * time, and the SDKs only require the field to be an integer.
 */
std::string openai_models_body(const std::vector<std::string> &ids);

}  // namespace sf
