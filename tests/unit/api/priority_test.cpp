// client_identity: who a request comes from, for fairness between clients (issue #18).
#include "api/priority.h"

#include <gtest/gtest.h>

TEST(ClientIdentity, KeyThenUserAgentThenConnectionAndNoSecretInIt) {
    sf::priority_headers h;
    h.authorization          = "Bearer sk-secret-123";
    h.user_agent             = "agent/1.0";
    const std::string by_key = sf::client_identity(h, "127.0.0.1:5000");
    EXPECT_EQ(by_key.rfind("key:", 0), 0u);
    EXPECT_EQ(by_key.find("secret"), std::string::npos);
    // The same key is the same client whatever the connection or User-Agent; x-api-key counts too.
    sf::priority_headers same;
    same.x_api_key = "sk-secret-123";
    EXPECT_EQ(sf::client_identity(same, "127.0.0.1:6000"), by_key);
    h.authorization = "Bearer sk-other";
    EXPECT_NE(sf::client_identity(h, "127.0.0.1:5000"), by_key);
    // No key: the User-Agent; neither: the connection.
    h.authorization         = "";
    const std::string by_ua = sf::client_identity(h, "127.0.0.1:5000");
    EXPECT_EQ(by_ua.rfind("ua:", 0), 0u);
    EXPECT_EQ(sf::client_identity(h, "127.0.0.1:7000"), by_ua);
    h.user_agent = "";
    EXPECT_EQ(sf::client_identity(h, "127.0.0.1:5000"), "conn:127.0.0.1:5000");
}
