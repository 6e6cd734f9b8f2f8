// client_identity: who a request comes from, for fairness between clients (issue #18).
#include "api/common/client_identity.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

TEST(ClientIdentity, KeyThenUserAgentThenConnectionAndNoSecretInIt) {
    const std::string secret(32, 's');
    sf::priority_headers h;
    h.authorization          = "Bearer sk-secret-123";
    h.user_agent             = "agent/1.0";
    const std::string by_key = sf::client_identity(h, "127.0.0.1:5000", secret);
    EXPECT_EQ(by_key.rfind("key:", 0), 0u);
    EXPECT_EQ(by_key.find("secret"), std::string::npos);
    // The same key is the same client whatever the connection or User-Agent; x-api-key counts too.
    sf::priority_headers same;
    same.x_api_key = "sk-secret-123";
    EXPECT_EQ(sf::client_identity(same, "127.0.0.1:6000", secret), by_key);
    h.authorization = "Bearer sk-other";
    EXPECT_NE(sf::client_identity(h, "127.0.0.1:5000", secret), by_key);
    // No key: the User-Agent; neither: the connection.
    h.authorization         = "";
    const std::string by_ua = sf::client_identity(h, "127.0.0.1:5000", secret);
    EXPECT_EQ(by_ua.rfind("ua:", 0), 0u);
    EXPECT_EQ(sf::client_identity(h, "127.0.0.1:7000", secret), by_ua);
    h.user_agent = "";
    EXPECT_EQ(sf::client_identity(h, "127.0.0.1:5000", secret), "conn:127.0.0.1:5000");
}

// Issue #38 item 7: the journaled id of a key is HMAC-SHA256 under the state dir's secret, not
// a hash anyone can recompute: another secret gives another id for the same key.
TEST(ClientIdentity, KeyIdsAreKeyedByTheStateDirsSecret) {
    sf::priority_headers h;
    h.authorization  = "Bearer sk-secret-123";
    const auto a     = sf::client_identity(h, "c", std::string(32, 'a'));
    const auto again = sf::client_identity(h, "c", std::string(32, 'a'));
    const auto other = sf::client_identity(h, "c", std::string(32, 'b'));
    EXPECT_EQ(a, again);
    EXPECT_NE(a, other);
    EXPECT_EQ(a.size(), 4u + 32u);         // "key:" + 16 bytes of the MAC in hex
    EXPECT_NE(a, "key:1a0f2e5d8c6b4f3e");  // not the 16-digit FNV-1a id of before
}

TEST(ClientIdentity, TheSecretIsMadeOnce0600AndReadAfter) {
    char tmpl[] = "/tmp/sf-identity-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    std::string s1, s2, err;
    ASSERT_TRUE(sf::load_identity_secret(dir, s1, err)) << err;
    EXPECT_EQ(s1.size(), 32u);
    struct stat st {};
    ASSERT_EQ(stat((dir + "/client-id.key").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_TRUE(sf::load_identity_secret(dir, s2, err)) << err;
    EXPECT_EQ(s1, s2);  // the same ids across restarts
    // A damaged file is an error that says what to do, not a silent new secret.
    FILE *f = fopen((dir + "/client-id.key").c_str(), "w");
    fputs("short", f);
    fclose(f);
    EXPECT_FALSE(sf::load_identity_secret(dir, s2, err));
    EXPECT_NE(err.find("remove it"), std::string::npos) << err;
    std::filesystem::remove_all(dir);
}

// One reading of the key (issue #39): with both headers, authentication, class, identity and
// ownership all take the Bearer one; before, identity took x-api-key and authentication Bearer.
TEST(ApiKey, BearerThenXApiKeyThenABareAuthorization) {
    sf::priority_headers h;
    h.authorization = "Bearer sk-bearer";
    h.x_api_key     = "sk-x";
    EXPECT_EQ(sf::api_key(h), "sk-bearer");
    h.authorization.clear();
    EXPECT_EQ(sf::api_key(h), "sk-x");
    h.authorization = "sk-bare";
    EXPECT_EQ(sf::api_key(h), "sk-x");
    h.x_api_key.clear();
    EXPECT_EQ(sf::api_key(h), "sk-bare");
    // The identity follows the same key.
    sf::priority_headers both{"", "Bearer sk-bearer", "sk-x", "ua"};
    sf::priority_headers bearer{"", "Bearer sk-bearer", "", "ua"};
    EXPECT_EQ(sf::client_identity(both, "c", "secret"), sf::client_identity(bearer, "c", "secret"));
}
