// GET /v1/models in Anthropic's shape (https://docs.anthropic.com/en/api/models-list), for
// clients that send anthropic-version. Pure: ids in, body out. Any thread.
#pragma once

#include <string>
#include <vector>

namespace sf {

/**
 * {"data": [{"type": "model", "id", "display_name": id, "created_at": the epoch}, ...],
 * "has_more": false, "first_id", "last_id"} (the ids null when the list is empty), one entry
 * per id in the given order: every model is on one page.
 */
std::string anthropic_models_body(const std::vector<std::string> &ids);

}  // namespace sf
