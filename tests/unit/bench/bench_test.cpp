// The bench's pure parts: percentiles, summaries across runs, ratios, the SSE reader.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bench/aggregate.h"
#include "bench/http_client.h"
#include "bench/stats.h"
#include "bench/workload.h"

namespace sf::bench {
namespace {

TEST(BenchStats, PercentileInterpolates) {
    std::vector<double> v = {4, 1, 3, 2};
    EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
    EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
    EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
    EXPECT_DOUBLE_EQ(median({7}), 7);
    EXPECT_TRUE(std::isnan(percentile({}, 50)));
}

TEST(BenchStats, SummarizeAndNull) {
    auto s = summarize({3, 1, 2});
    EXPECT_EQ(s["median"], 2);
    EXPECT_EQ(s["min"], 1);
    EXPECT_EQ(s["max"], 3);
    EXPECT_TRUE(summarize({}).is_null());
    EXPECT_TRUE(num(NAN).is_null());
}

TEST(BenchAggregate, MergesTreesAcrossRuns) {
    nlohmann::json a = {{"x", 1}, {"v", {{"seq", {{"hit_rate", 0.5}}}}}, {"verdict", "NO"}};
    nlohmann::json b = {{"x", 3}, {"v", {{"seq", {{"hit_rate", 0.7}}}}}, {"verdict", "NO"}};
    nlohmann::json c = {{"x", 2}, {"v", {{"seq", nullptr}}}, {"verdict", "YES"}};
    auto m           = aggregate_trees({a, b, c});
    EXPECT_EQ(m["x"]["median"], 2);
    EXPECT_DOUBLE_EQ(m["v"]["seq"]["hit_rate"]["max"].get<double>(), 0.7);
    EXPECT_EQ(m["verdict"], "NO");
    EXPECT_TRUE(is_summary(m["x"]));
    std::vector<std::pair<std::string, nlohmann::json>> rows;
    flatten(m, "", rows);
    EXPECT_EQ(rows.size(), 3u);
}

TEST(BenchAggregate, RatioPairByPair) {
    nlohmann::json a = {{"t", 2.0}, {"z", 1.0}, {"s", "YES"}};
    nlohmann::json b = {{"t", 4.0}, {"z", 0.0}, {"s", "NO"}};
    auto r           = ratio_tree(a, b);
    EXPECT_DOUBLE_EQ(r["t"].get<double>(), 0.5);
    EXPECT_FALSE(r.contains("z"));  // division by zero: no ratio
    EXPECT_FALSE(r.contains("s"));
}

TEST(BenchSse, ReadsChunksUsageAndTimings) {
    stream_result r;
    sse_reader rd(r);
    std::string s =
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"lo\"}}]}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2},"
        "\"timings\":{\"cache_n\":6,\"prompt_n\":4}}\n\ndata: [DONE]\n\n";
    // Split mid-line, as the network does.
    rd.feed(s.data(), 40, 0.5);
    rd.feed(s.data() + 40, s.size() - 40, 0.75);
    EXPECT_EQ(r.pieces.size(), 2u);
    EXPECT_DOUBLE_EQ(r.ttft_s, 0.75);
    EXPECT_EQ(r.prompt_tokens, 10);
    EXPECT_EQ(r.cached_tokens, 6);
    EXPECT_EQ(r.tokens(), 2);
    EXPECT_TRUE(r.done);
    EXPECT_FALSE(r.cut);
}

TEST(BenchSse, InBandErrorCutsTheStream) {
    stream_result r;
    sse_reader rd(r);
    std::string s =
        "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
        "data: {\"error\":{\"message\":\"worker died\"}}\n\ndata: [DONE]\n\n";
    rd.feed(s.data(), s.size(), 1);
    EXPECT_TRUE(r.cut);
    EXPECT_EQ(r.error, "worker died");
    EXPECT_EQ(r.pieces.size(), 1u);
}

TEST(BenchWorkload, SeededAndSized) {
    EXPECT_EQ(words(5, 20), words(5, 20));
    EXPECT_NE(words(5, 20), words(6, 20));
    std::string w = words(1, 100);
    EXPECT_EQ(std::count(w.begin(), w.end(), ' '), 99);
    EXPECT_LE(text_of_bytes(3, 500).size(), 500u);
    EXPECT_EQ(normalize_base_url("127.0.0.1:8453/v1/"), "http://127.0.0.1:8453");
}

}  // namespace
}  // namespace sf::bench
