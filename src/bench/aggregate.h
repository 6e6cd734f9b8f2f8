// Across runs: every numeric figure → {"median","min","max"}; ratios pair by pair per run.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace sf::bench {

/**
 * Merges same-shaped figure trees (one per run): numbers become {"median","min","max"},
 * strings the most frequent value, objects are merged key by key; all-null stays null.
 */
nlohmann::json aggregate_trees(const std::vector<nlohmann::json> &trees);

/** Leaf-by-leaf a/b of two figure trees (null where either is missing or b is 0). */
nlohmann::json ratio_tree(const nlohmann::json &a, const nlohmann::json &b);

/** Flattens a tree into "a.b.c" → leaf (objects only; a {"median",...} summary is a leaf). */
void flatten(const nlohmann::json &tree, const std::string &prefix,
             std::vector<std::pair<std::string, nlohmann::json>> &out);

/** True for a {"median","min","max"} object. */
bool is_summary(const nlohmann::json &j);

}  // namespace sf::bench
