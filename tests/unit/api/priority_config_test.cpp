// The --config file's priority rules (api/common/priority.h parse_priority_config /
// load_priority_config).
#include "api/common/priority.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using sf::parse_priority_config;
using sf::priority_class;
using sf::priority_config;

TEST(PriorityConfigTest, ReadsDefaultAndRules) {
    priority_config cfg;
    const std::string err = parse_priority_config(
        R"({"default_priority": "batch", "priority_rules": [
              {"key": "sk-ci", "class": "batch"}, {"user_agent": "codex", "class": "interactive"}]})",
        "cfg.json", cfg);
    ASSERT_EQ(err, "");
    EXPECT_EQ(cfg.default_class, priority_class::BATCH);
    ASSERT_EQ(cfg.rules.size(), 2u);
    EXPECT_EQ(cfg.rules[0].key_contains, "sk-ci");
    EXPECT_EQ(cfg.rules[1].user_agent_contains, "codex");
    EXPECT_EQ(cfg.rules[1].cls, priority_class::INTERACTIVE);
}

// Found writing tests/fuzz/fuzz_config: a rule's key of another type made json::value() throw
// (type_error 302), an exception out of `serve` start-up instead of the error line.
TEST(PriorityConfigTest, NonStringMatcherIsAnErrorNotAnException) {
    for (const char *text : {R"({"priority_rules": [{"key": 1, "class": "batch"}]})",
                             R"({"priority_rules": [{"user_agent": [], "class": "normal"}]})"}) {
        priority_config cfg;
        std::string err;
        EXPECT_NO_THROW(err = parse_priority_config(text, "cfg.json", cfg)) << text;
        EXPECT_NE(err.find("must be a string"), std::string::npos) << err;
        EXPECT_TRUE(cfg.rules.empty());
    }
}

TEST(PriorityConfigTest, MalformedFileNamesThePath) {
    priority_config cfg;
    EXPECT_EQ(parse_priority_config("{\"priority_rules\": 3}", "/etc/x.json", cfg),
              "/etc/x.json: priority_rules must be an array");
    EXPECT_EQ(parse_priority_config("not json", "/etc/x.json", cfg),
              "/etc/x.json is not a JSON object");
    EXPECT_EQ(parse_priority_config(R"({"priority_rules": [{"class": "batch"}]})", "c", cfg),
              "c: each priority rule needs a key or a user_agent to match");
}

TEST(PriorityConfigTest, LoadReadsTheFile) {
    const std::string path = ::testing::TempDir() + "priority_config_test.json";
    std::ofstream(path) << R"({"default_priority": "interactive"})";
    priority_config cfg;
    EXPECT_EQ(sf::load_priority_config(path, cfg), "");
    EXPECT_EQ(cfg.default_class, priority_class::INTERACTIVE);
    std::remove(path.c_str());
    EXPECT_EQ(sf::load_priority_config(path, cfg), "cannot read the config file " + path);
}
