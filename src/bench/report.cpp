#include "bench/report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <tuple>

#include "bench/aggregate.h"
#include "bench/svg.h"

namespace sf::bench {

namespace {

using row = std::pair<std::string, nlohmann::json>;

std::string fmt_num(double v) {
    char b[32];
    double a = std::fabs(v);
    std::snprintf(b, sizeof b,
                  a == 0      ? "0"
                  : a >= 1000 ? "%.0f"
                  : a >= 10   ? "%.1f"
                  : a >= 0.1  ? "%.3f"
                              : "%.4f",
                  v);
    return b;
}

std::string cell(const nlohmann::json &v, bool range) {
    if (v.is_null()) return "–";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number()) return fmt_num(v.get<double>());
    if (!is_summary(v)) return v.dump();
    std::string s = fmt_num(v["median"].get<double>());
    if (range && v["min"] != v["max"])
        s += " (" + fmt_num(v["min"].get<double>()) + "–" + fmt_num(v["max"].get<double>()) + ")";
    return s;
}

std::vector<std::string> server_names(const nlohmann::json &rec) {
    std::vector<std::string> n;
    if (rec.contains("server_order")) return rec["server_order"].get<std::vector<std::string>>();
    for (auto it = rec["servers"].begin(); it != rec["servers"].end(); ++it) n.push_back(it.key());
    return n;
}

// Every figure path appearing under any server, in first-seen order.
std::vector<std::string> figure_paths(const nlohmann::json &rec) {
    std::vector<std::string> paths;
    for (auto it = rec["servers"].begin(); it != rec["servers"].end(); ++it) {
        std::vector<row> rows;
        nlohmann::json f = it.value();
        f.erase("notes");
        flatten(f, "", rows);
        for (auto &[p, v] : rows)
            if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
    }
    return paths;
}

nlohmann::json at_path(const nlohmann::json &tree, const std::string &path) {
    const nlohmann::json *cur = &tree;
    size_t start              = 0;
    while (true) {
        size_t dot      = path.find('.', start);
        std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
        if (!cur->is_object() || !cur->contains(key)) return nullptr;
        cur = &(*cur)[key];
        if (dot == std::string::npos) return *cur;
        start = dot + 1;
    }
}

struct table {
    std::vector<std::string> head;
    std::vector<std::vector<std::string>> rows;
};

table build_table(const nlohmann::json &rec, bool range) {
    table t;
    auto names = server_names(rec);
    t.head     = {"figure"};
    for (auto &n : names) t.head.push_back(n);
    std::vector<std::string> ratio_keys;
    for (auto it = rec["ratios"].begin(); it != rec["ratios"].end(); ++it) {
        ratio_keys.push_back(it.key());
        t.head.push_back(it.key());
    }
    for (const auto &p : figure_paths(rec)) {
        std::vector<std::string> r = {p};
        for (auto &n : names) r.push_back(cell(at_path(rec["servers"][n], p), range));
        for (auto &k : ratio_keys) r.push_back(cell(at_path(rec["ratios"][k], p), false));
        t.rows.push_back(r);
    }
    return t;
}

double median_at(const nlohmann::json &server, const std::string &path) {
    nlohmann::json v = at_path(server, path);
    if (is_summary(v)) return v["median"].get<double>();
    return NAN;
}

void chart(const nlohmann::json &rec, const std::string &dir, const std::string &file,
           const std::string &title, const std::string &unit, bool (*pick)(const std::string &),
           std::vector<std::string> &written) {
    std::vector<std::string> cats;
    for (const auto &p : figure_paths(rec))
        if (pick(p)) cats.push_back(p);
    if (cats.empty()) return;
    std::vector<bar_series> series;
    for (const auto &n : server_names(rec)) {
        bar_series s{n, {}};
        for (const auto &c : cats) s.values.push_back(median_at(rec["servers"][n], c));
        series.push_back(s);
    }
    std::ofstream(dir + "/" + file) << bar_chart(title, unit, cats, series);
    written.push_back(file);
}

// Display width: UTF-8 code points.
size_t width(const std::string &s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

bool has(const std::string &p, const char *s) {
    return p.find(s) != std::string::npos;
}

}  // namespace

std::string terminal_table(const nlohmann::json &rec) {
    table t = build_table(rec, true);
    std::vector<size_t> w(t.head.size(), 0);
    auto measure = [&](const std::vector<std::string> &r) {
        for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
    };
    measure(t.head);
    for (auto &r : t.rows) measure(r);
    std::string out;
    auto line = [&](const std::vector<std::string> &r) {
        for (size_t i = 0; i < r.size(); ++i) {
            out += r[i] + std::string(w[i] - width(r[i]) + 2, ' ');
        }
        out += "\n";
    };
    line(t.head);
    for (auto &r : t.rows) line(r);
    return out;
}

std::string markdown_report(const nlohmann::json &rec) {
    std::string md = "# superfluid bench: " + rec["scenario"].get<std::string>() + "\n\n";
    md += "```\n" + rec["command"].get<std::string>() + "\n```\n\n";
    md += "- date: " + rec.value("started_at", "") + ", runs: " + rec["runs"].dump() +
          ", wall: " + fmt_num(rec.value("duration_s", 0.0)) + " s\n";
    if (rec["model"].is_object())
        md += "- model: `" + rec["model"]["path"].get<std::string>() + "` sha256 `" +
              rec["model"]["sha256"].get<std::string>() + "`\n";
    md += "- machine: " + rec["machine"].dump() + "\n";
    md += "- versions: " + rec["versions"].dump() + "\n";
    md += "- server settings: " + rec["settings"].dump() + "\n";
    const auto &h = rec["harness"];
    if (h.contains("ttft_s") && is_summary(h["ttft_s"]))
        md += "- harness overhead (stub answering instantly, " + h["requests"].dump() +
              " requests): TTFT " + cell(h["ttft_s"], true) + " s, total " +
              cell(h["total_s"], true) + " s per request\n";
    md += "\nMedian (min–max) over runs; ratios are computed pair by pair within each run.\n\n";
    table t     = build_table(rec, true);
    auto row_md = [](const std::vector<std::string> &r) {
        std::string s = "|";
        for (auto &c : r) s += " " + c + " |";
        return s + "\n";
    };
    md += row_md(t.head);
    md += "|" + std::string();
    for (size_t i = 0; i < t.head.size(); ++i) md += " --- |";
    md += "\n";
    for (auto &r : t.rows) md += row_md(r);

    if (rec.contains("engine")) {
        const auto &e = rec["engine"];
        md += "\n## The engine alone (llama-bench, same file, each run)\n\n`" +
              e.value("command", std::string("llama-bench")) +
              "`\n\n| figure | value |\n| --- | --- |\n";
        for (const char *k : {"pp512_tokens_per_s", "tg128_tokens_per_s"})
            if (e["llama-bench"].contains(k))
                md += std::string("| ") + k + " | " + cell(e["llama-bench"][k], true) + " |\n";
        for (const char *server : {"superfluid", "llama-server"}) {
            const std::string key = std::string(server) + "/llama-bench";
            if (!e.contains(key)) continue;
            for (const char *k :
                 {"decode_over_tg128", "itl_p50_over_tg128", "tokens_per_s_c1_over_tg128"})
                if (e[key].contains(k))
                    md += "| " + std::string(server) + " c1 " + k + " | " + cell(e[key][k], true) +
                          " |\n";
        }
    }
    md +=
        "\n## Quality gates\n\n| run | server | early_stop | memory_pressure | "
        "duplicate_processes | swap MB | error |\n| --- | --- | --- | --- | --- | --- | --- |\n";
    for (size_t i = 0; i < rec["per_run"].size(); ++i) {
        for (const auto &name : server_names(rec)) {
            const auto &one = rec["per_run"][i][name];
            const auto &g   = one["gates"];
            md += "| " + std::to_string(i + 1) + " | " + name + " | " + g["early_stop"].dump() +
                  " | " + g["memory_pressure"].dump() + " | " + g["duplicate_processes"].dump() +
                  (g["other_engine_pids"].empty() ? "" : " " + g["other_engine_pids"].dump()) +
                  " | " + fmt_num(g.value("swap_mb", 0.0)) + " | " + one.value("error", "") +
                  " |\n";
        }
    }
    md += "\n## Notes\n\n";
    for (auto it = rec["servers"].begin(); it != rec["servers"].end(); ++it) {
        for (const auto &n : it.value().value("notes", nlohmann::json::array()))
            md += "- " + it.key() + ": " + n.get<std::string>() + "\n";
    }
    md += "\n## Charts\n\n";
    for (const auto &c : rec["charts"])
        md += "![" + c.get<std::string>() + "](" + c.get<std::string>() + ")\n\n";
    return md;
}

// Endurance: TTFT and prefilled tokens against the turn number, one line per server (run 1,
// first trajectory: the samples ttft_by_turn and prefilled_by_turn).
static void write_endurance_charts(const nlohmann::json &rec, const std::string &dir,
                                   std::vector<std::string> &written) {
    if (rec["scenario"] != "endurance" || rec["per_run"].empty()) return;
    const auto &run = rec["per_run"][0];
    for (const auto &[key, file, title, unit] :
         {std::tuple<const char *, const char *, const char *, const char *>{
              "ttft_by_turn", "endurance_ttft.svg", "TTFT per turn (run 1, trajectory 1)",
              "seconds"},
          {"prefilled_by_turn", "endurance_prefilled.svg",
           "Prompt tokens computed per turn (prompt − cached; run 1, trajectory 1)", "tokens"}}) {
        std::vector<line_series> series;
        for (auto it = run.begin(); it != run.end(); ++it) {
            const auto &v = it.value()["samples"].value(key, nlohmann::json::array());
            line_series s{it.key(), {}, {}};
            for (size_t i = 0; i < v.size(); ++i) {
                s.x.push_back(double(i + 1));
                s.y.push_back(v[i].is_number() ? v[i].get<double>() : std::nan(""));
            }
            if (!s.x.empty()) series.push_back(std::move(s));
        }
        if (series.empty()) continue;
        std::ofstream(dir + "/" + file) << line_chart(title, "turn", unit, series);
        written.push_back(file);
    }
}

std::vector<std::string> write_charts(const nlohmann::json &rec, const std::string &dir) {
    std::vector<std::string> written;
    std::string sc = rec["scenario"];
    chart(
        rec, dir, "ttft.svg", "TTFT per server and phase (" + sc + ", median)", "seconds",
        [](const std::string &p) { return has(p, "ttft") || p == "recovery_s"; }, written);
    chart(
        rec, dir, "tokens_per_s.svg", "Aggregate tokens/s (" + sc + ", median)", "tokens/s",
        [](const std::string &p) { return has(p, "tokens_per_s"); }, written);
    chart(
        rec, dir, "hit_rate.svg", "Prefix-cache hit rate (median)", "fraction",
        [](const std::string &p) { return has(p, "hit_rate"); }, written);
    chart(
        rec, dir, "latency.svg", "Request latency (" + sc + ", median)", "seconds",
        [](const std::string &p) {
            return has(p, "burst.") &&
                   (has(p, "p50_s") || has(p, "p95_s") || has(p, "max_s") || has(p, "wall_s"));
        },
        written);
    write_endurance_charts(rec, dir, written);
    // Burst: every request's latency, pooled over runs.
    std::vector<dist_column> cols;
    std::map<std::string, std::map<std::string, std::vector<double>>> by;  // N → server → values
    std::vector<std::string> order;
    for (const auto &run : rec["per_run"]) {
        for (auto it = run.begin(); it != run.end(); ++it) {
            const auto &lat = it.value()["samples"].value("latency_s", nlohmann::json::object());
            for (auto n = lat.begin(); n != lat.end(); ++n) {
                if (std::find(order.begin(), order.end(), n.key()) == order.end())
                    order.push_back(n.key());
                for (double v : n.value()) by[n.key()][it.key()].push_back(v);
            }
        }
    }
    for (const auto &n : order)
        for (auto &[server, vals] : by[n]) cols.push_back({"N=" + n, server, vals});
    if (!cols.empty()) {
        std::ofstream(dir + "/burst_latency.svg")
            << distribution_chart("Burst latency distribution per server", "seconds", cols);
        written.push_back("burst_latency.svg");
    }
    return written;
}

}  // namespace sf::bench
