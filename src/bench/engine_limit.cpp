#include "bench/engine_limit.h"

#include <cstdio>
#include <filesystem>

#include "bench/stats.h"

namespace sf::bench {

using nlohmann::json;

std::string llama_bench_path(const std::string &llama_server_bin) {
    const auto p = std::filesystem::path(llama_server_bin).parent_path() / "llama-bench";
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) ? p.string() : "";
}

json run_llama_bench(const std::string &bin, const std::string &model, int threads) {
    std::string cmd = "'" + bin + "' -m '" + model + "' -p 512 -n 128 -r 1 -o json";
    if (threads > 0) cmd += " -t " + std::to_string(threads);
    FILE *p = popen((cmd + " 2>/dev/null").c_str(), "r");
    if (!p) return {{"error", "cannot run " + bin}};
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int rc = pclose(p);
    const json j = json::parse(out, nullptr, false);
    if (rc != 0 || !j.is_array())
        return {{"error", "llama-bench failed (status " + std::to_string(rc) + ")"}};
    json r = {{"command", cmd}};
    for (const auto &t : j) {
        if (!t.is_object() || !t.contains("avg_ts")) continue;
        if (t.value("n_prompt", 0) == 512 && t.value("n_gen", 0) == 0)
            r["pp512_tokens_per_s"] = t["avg_ts"];
        if (t.value("n_prompt", 0) == 0 && t.value("n_gen", 0) == 128)
            r["tg128_tokens_per_s"] = t["avg_ts"];
    }
    if (!r.contains("pp512_tokens_per_s") || !r.contains("tg128_tokens_per_s"))
        return {{"error", "llama-bench's JSON lacks pp512 or tg128"}};
    return r;
}

json engine_ratios(const json &sf, const json &engine) {
    auto number = [](const json &o, const char *k) {
        return o.is_object() && o.contains(k) && o[k].is_number() ? o[k].get<double>() : -1.0;
    };
    const double tg     = number(engine, "tg128_tokens_per_s");
    const double decode = number(sf, "decode_tokens_per_s_c1");
    const double itl = number(sf, "itl_p50_s_c1"), tps = number(sf, "tokens_per_s_c1");
    return {{"decode_over_tg128", tg > 0 && decode > 0 ? num(decode / tg) : json(nullptr)},
            {"itl_p50_over_tg128", tg > 0 && itl > 0 ? num(1.0 / itl / tg) : json(nullptr)},
            {"tokens_per_s_c1_over_tg128", tg > 0 && tps > 0 ? num(tps / tg) : json(nullptr)}};
}

}  // namespace sf::bench
