#include "api/openai/openai_models.h"

#include "api/common/json_fields.h"

namespace sf {

std::string openai_models_body(const std::vector<std::string> &ids,
                               const std::vector<std::string> &input_modalities) {
    fields::json data = fields::json::array();
    for (const auto &id : ids) {
        fields::json entry = {
            {"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "superfluid"}};
        if (!input_modalities.empty())
            entry["architecture"] = {{"input_modalities", input_modalities},
                                     {"output_modalities", fields::json::array({"text"})}};
        data.push_back(std::move(entry));
    }
    return fields::dump_json({{"object", "list"}, {"data", data}});
}

std::vector<std::string> input_modalities(const model_description &m) {
    std::vector<std::string> out{"text"};
    if (m.vision) out.push_back("image");
    if (m.audio) out.push_back("audio");
    return out;
}

}  // namespace sf
