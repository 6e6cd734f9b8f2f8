#include "api/openai/openai_models.h"

#include "api/common/json_fields.h"

namespace sf {

std::string openai_models_body(const std::vector<std::string> &ids) {
    fields::json data = fields::json::array();
    for (const auto &id : ids)
        data.push_back(
            {{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "superfluid"}});
    return fields::dump_json({{"object", "list"}, {"data", data}});
}

}  // namespace sf
