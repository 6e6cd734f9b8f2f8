// The bench's outputs from one results record: report.md, the terminal table, SVG charts.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sf::bench {

/** The side-by-side table (figure, each server's median and range, ratio) as plain text. */
std::string terminal_table(const nlohmann::json &record);

/** report.md: context (command, model, machine, versions, overhead), table, gates, notes. */
std::string markdown_report(const nlohmann::json &record);

/** Writes the scenario's SVG charts into `dir`; returns their file names. */
std::vector<std::string> write_charts(const nlohmann::json &record, const std::string &dir);

}  // namespace sf::bench
