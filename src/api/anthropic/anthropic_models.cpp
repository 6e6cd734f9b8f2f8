#include "api/anthropic/anthropic_models.h"

#include "api/common/json_fields.h"

namespace sf {

std::string anthropic_models_body(const std::vector<std::string> &ids) {
    using fields::json;
    json data = json::array();
    for (const auto &id : ids)
        data.push_back({{"type", "model"},
                        {"id", id},
                        {"display_name", id},
                        {"created_at", "1970-01-01T00:00:00Z"}});
    return fields::dump_json({{"data", data},
                              {"has_more", false},
                              {"first_id", ids.empty() ? json(nullptr) : json(ids.front())},
                              {"last_id", ids.empty() ? json(nullptr) : json(ids.back())}});
}

}  // namespace sf
