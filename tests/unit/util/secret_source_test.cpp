// Secrets from a file or an environment variable (issue #38 item 7: keys and join tokens need not
// be command-line arguments).
#include "util/secret_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace {

std::string write_temp(const std::string &text, unsigned mode) {
    char tmpl[]  = "/tmp/sf-secret-XXXXXX";
    const int fd = mkstemp(tmpl);
    EXPECT_GE(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text.c_str(), f);
    fclose(f);
    chmod(tmpl, mode);
    return tmpl;
}

}  // namespace

TEST(SecretSource, AFileGivesOneSecretALineSkippingCommentsAndBlanks) {
    const auto path = write_temp("# the API keys\n  sk-one  \r\n\nsk-two\n", 0600);
    std::vector<std::string> keys;
    std::string err, warning;
    ASSERT_TRUE(sf::read_secrets_file(path, keys, err, warning)) << err;
    EXPECT_EQ(keys, (std::vector<std::string>{"sk-one", "sk-two"}));
    EXPECT_TRUE(warning.empty()) << warning;
    std::filesystem::remove(path);
}

TEST(SecretSource, AReadableFileIsWarnedAboutAnEmptyOrMissingOneIsAnError) {
    const auto open = write_temp("sk-one\n", 0644);
    std::vector<std::string> keys;
    std::string err, warning;
    ASSERT_TRUE(sf::read_secrets_file(open, keys, err, warning));
    EXPECT_NE(warning.find("mode 644"), std::string::npos) << warning;
    const auto empty = write_temp("# nothing\n\n", 0600);
    EXPECT_FALSE(sf::read_secrets_file(empty, keys, err, warning));
    EXPECT_NE(err.find("holds no secret"), std::string::npos) << err;
    EXPECT_FALSE(sf::read_secrets_file("/nonexistent/keys", keys, err, warning));
    EXPECT_NE(err.find("cannot read"), std::string::npos);
    std::filesystem::remove(open);
    std::filesystem::remove(empty);
}

TEST(SecretSource, AnEnvironmentVariableSplitsAtCommas) {
    setenv("SF_TEST_SECRET", " sk-a ,sk-b,,", 1);
    EXPECT_EQ(sf::secrets_from_env("SF_TEST_SECRET"), (std::vector<std::string>{"sk-a", "sk-b"}));
    unsetenv("SF_TEST_SECRET");
    EXPECT_TRUE(sf::secrets_from_env("SF_TEST_SECRET").empty());
}
