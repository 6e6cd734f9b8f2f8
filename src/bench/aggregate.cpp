#include "bench/aggregate.h"

#include <map>
#include <set>

#include "bench/stats.h"

namespace sf::bench {

bool is_summary(const nlohmann::json &j) {
    return j.is_object() && j.contains("median") && j.contains("min") && j.contains("max") &&
           j.size() == 3;
}

nlohmann::json aggregate_trees(const std::vector<nlohmann::json> &trees) {
    std::vector<double> nums;
    std::map<std::string, int> strings;
    std::vector<const nlohmann::json *> objects;
    for (const auto &t : trees) {
        if (t.is_number()) nums.push_back(t.get<double>());
        if (t.is_string()) ++strings[t.get<std::string>()];
        if (t.is_object()) objects.push_back(&t);
    }
    if (!nums.empty()) return summarize(nums);
    if (!strings.empty()) {
        auto best = strings.begin();
        for (auto it = strings.begin(); it != strings.end(); ++it)
            if (it->second > best->second) best = it;
        return best->first;
    }
    if (objects.empty()) return nullptr;
    std::vector<std::string> keys;
    std::set<std::string> seen;
    for (const auto *o : objects) {
        for (auto it = o->begin(); it != o->end(); ++it)
            if (seen.insert(it.key()).second) keys.push_back(it.key());
    }
    nlohmann::json out = nlohmann::json::object();
    for (const auto &k : keys) {
        std::vector<nlohmann::json> sub;
        for (const auto *o : objects)
            if (o->contains(k)) sub.push_back((*o)[k]);
        out[k] = aggregate_trees(sub);
    }
    return out;
}

nlohmann::json ratio_tree(const nlohmann::json &a, const nlohmann::json &b) {
    if (a.is_number() && b.is_number()) {
        double d = b.get<double>();
        return d != 0 ? num(a.get<double>() / d) : nlohmann::json(nullptr);
    }
    if (a.is_object() && b.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (auto it = a.begin(); it != a.end(); ++it) {
            if (!b.contains(it.key())) continue;
            nlohmann::json r = ratio_tree(it.value(), b[it.key()]);
            if (!r.is_null()) out[it.key()] = r;
        }
        return out.empty() ? nlohmann::json(nullptr) : out;
    }
    return nullptr;
}

void flatten(const nlohmann::json &tree, const std::string &prefix,
             std::vector<std::pair<std::string, nlohmann::json>> &out) {
    if (tree.is_object() && !is_summary(tree)) {
        for (auto it = tree.begin(); it != tree.end(); ++it)
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
        return;
    }
    out.emplace_back(prefix, tree);
}

}  // namespace sf::bench
