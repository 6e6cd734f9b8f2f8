#include "engine/scripted/output_script.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace sf {

using json = nlohmann::json;

namespace {

bool parse_reply(const json &r, size_t i, scripted_reply &out, std::string &error) {
    const std::string where = "replies[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("text") || !r["text"].is_string()) {
        error = where + ": an object with a string \"text\" is required";
        return false;
    }
    out.text = r["text"].get<std::string>();
    if (!r.contains("when")) return true;
    const json &w = r["when"];
    if (!w.is_object()) {
        error = where + ".when: an object is required";
        return false;
    }
    for (const auto &[k, v] : w.items()) {
        if (k == "tool" && v.is_string()) {
            out.tool = v.get<std::string>();
        } else if (k == "tool_results" && v.is_number_integer() && v.get<int>() >= 0) {
            out.tool_results = v.get<int>();
        } else if (k == "user_contains" && v.is_string()) {
            out.user_contains = v.get<std::string>();
        } else {
            error = where + ".when." + k +
                    ": unknown condition or wrong type (tool: string, tool_results: integer >= "
                    "0, user_contains: string)";
            return false;
        }
    }
    return true;
}

}  // namespace

bool parse_output_script(const std::string &json_text, output_script &out, std::string &error) {
    json j = json::parse(json_text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        error = "not a JSON object";
        return false;
    }
    if (!j.contains("replies") || !j["replies"].is_array()) {
        error = "\"replies\": an array is required";
        return false;
    }
    output_script s;
    for (size_t i = 0; i < j["replies"].size(); ++i) {
        scripted_reply r;
        if (!parse_reply(j["replies"][i], i, r, error)) return false;
        s.replies.push_back(std::move(r));
    }
    if (j.contains("end")) {
        if (!j["end"].is_string() || j["end"].get<std::string>().empty()) {
            error = "\"end\": a non-empty string is required";
            return false;
        }
        s.end = j["end"].get<std::string>();
    }
    out = std::move(s);
    return true;
}

bool load_output_script(const std::string &path, output_script &out, std::string &error) {
    std::ifstream f(path);
    if (!f) {
        error = path + ": cannot be read";
        return false;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    if (!parse_output_script(ss.str(), out, error)) {
        error = path + ": " + error;
        return false;
    }
    return true;
}

const scripted_reply *pick_reply(const output_script &script,
                                 const std::vector<chat_message> &messages,
                                 const chat_options &options) {
    int tool_results = 0;
    for (const auto &m : messages) tool_results += m.role == "tool";
    const auto user_says = [&](const std::string &text) {
        for (const auto &m : messages)
            if (m.role == "user" && m.content.find(text) != std::string::npos) return true;
        return false;
    };
    for (const auto &r : script.replies) {
        if (r.tool_results >= 0 && r.tool_results != tool_results) continue;
        if (!r.user_contains.empty() && !user_says(r.user_contains)) continue;
        if (!r.tool.empty()) {
            bool offered = false;
            for (const auto &t : options.tools) offered = offered || t.name == r.tool;
            if (!offered) continue;
        }
        return &r;
    }
    return nullptr;
}

}  // namespace sf
